// An app key's last call, as the API records it and the debug page reads it (real PostgreSQL).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { appsRepository, linksRepository } from '../src/db/index.js';

let env: TestEnvironment;
beforeAll(async () => {
  env = await createTestEnvironment();
});
afterAll(() => env?.close());

async function user(): Promise<string> {
  const [row] = await env.sql<{ id: string }[]>`
    INSERT INTO users (name, email, password_hash) VALUES ('T', ${`u-${randomBytes(4).toString('hex')}@example.com`}, 'x') RETURNING id`;
  return row!.id;
}

const key = () => ({ prefix: randomBytes(6).toString('hex'), hash: randomBytes(32) });
const PRINT = Array(32).fill('AB').join(':');

describe('app key uses', () => {
  it("are read for a link's own apps among its owner's, never another account's app of the same name", async () => {
    const apps = appsRepository(env.sql);
    const owner = await user();
    const other = await user();
    const ios = await apps.create(owner, { platform: 'ios', teamId: 'ABCDE12345', bundleId: 'com.example.shop' }, key());
    await apps.create(owner, { platform: 'android', packageName: 'com.example.shop', sha256CertFingerprints: [PRINT] }, key());
    const theirs = await apps.create(other, { platform: 'ios', teamId: 'ZZZZZ99999', bundleId: 'com.example.shop' }, key());
    await apps.touchKey(theirs.id, 'install', 60);
    const link = await linksRepository(env.sql).create(owner, `k${randomBytes(3).toString('hex')}`, {
      title: 'T',
      defaultUrl: 'https://example.com',
    });

    expect(await apps.keyUsesForLink(link.id, 'com.example.shop', 'com.example.shop')).toEqual([
      { platform: 'ios', app: 'com.example.shop', call: null, at: null },
      { platform: 'android', app: 'com.example.shop', call: null, at: null },
    ]);
    await apps.touchKey(ios.id, 'open', 60);
    const [first] = await apps.keyUsesForLink(link.id, 'com.example.shop', null);
    expect(first).toMatchObject({ platform: 'ios', call: 'open' });
    expect(first!.at).toBeInstanceOf(Date);

    // Within the resolution nothing moves; past it, the next call is recorded.
    await apps.touchKey(ios.id, 'install', 60);
    expect((await apps.keyUsesForLink(link.id, 'com.example.shop', null))[0]).toEqual(first);
    await apps.touchKey(ios.id, 'install', 0);
    expect((await apps.keyUsesForLink(link.id, 'com.example.shop', null))[0]).toMatchObject({ call: 'install' });

    expect(await apps.keyUsesForLink(link.id, 'com.example.other', null)).toEqual([]);
    expect(await apps.keyUsesForLink('not-a-uuid', 'com.example.shop', null)).toEqual([]);
    expect((await apps.findById(ios.id))!.keyLastCall).toBe('install');
  });
});
