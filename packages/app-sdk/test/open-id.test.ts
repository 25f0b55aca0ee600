import { describe, expect, it } from 'vitest';
import { newOpenId } from '../src/open-id.js';

// What the API accepts as an openId (packages/core's appOpenBodySchema), and a UUID v4's shape.
const ACCEPTED = /^[A-Za-z0-9_-]{8,64}$/;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('newOpenId', () => {
  it('uses crypto.randomUUID where there is one', () => {
    expect(newOpenId({ randomUUID: () => '11111111-2222-4333-8444-555555555555' })).toBe('11111111-2222-4333-8444-555555555555');
    expect(newOpenId()).toMatch(UUID_V4);
  });

  it('builds a UUID v4 from crypto.getRandomValues without randomUUID (React Native)', () => {
    const allOnes = newOpenId({
      getRandomValues: <T extends ArrayBufferView | null>(array: T) => {
        new Uint8Array(array!.buffer).fill(0xff);
        return array;
      },
    });
    expect(allOnes).toBe('ffffffff-ffff-4fff-bfff-ffffffffffff');
    const real = { getRandomValues: globalThis.crypto.getRandomValues.bind(globalThis.crypto) };
    const ids = new Set(Array.from({ length: 1000 }, () => newOpenId(real)));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(UUID_V4);
  });

  it('still makes distinct, accepted ids with no crypto at all', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newOpenId(undefined)));
    // `undefined` as the argument means "the default"; an empty object is a platform without crypto.
    const bare = new Set(Array.from({ length: 1000 }, () => newOpenId({})));
    expect(ids.size).toBe(1000);
    expect(bare.size).toBe(1000);
    for (const id of [...ids, ...bare]) {
      expect(id).toMatch(UUID_V4);
      expect(id).toMatch(ACCEPTED);
    }
  });
});
