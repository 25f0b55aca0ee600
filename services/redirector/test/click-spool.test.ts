import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { packClickBatch, type PackedClickBatch } from '@deeplink/core';
import { NEXT_RELEASE_FORMATS, PACKED_3 } from '@deeplink/test-kit/next-batch-format';
import { createClickSpool, SET_ASIDE_FILE } from '../src/click-spool.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const newDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'deeplink-spool-test-'));
  dirs.push(dir);
  return dir;
};
const batch = (id: string, clicks = 2): PackedClickBatch =>
  packClickBatch({
    batchId: id,
    clicks: Array.from({ length: clicks }, (_, i) => ({ linkId: 'l', ts: 1_000 + i, ip: `10.0.0.${i}`, userAgent: 'ua', referrer: '' })),
  });

describe('the click spool', () => {
  it('replays what it took, oldest first, across a restart, and is empty afterwards', async () => {
    const dir = newDir();
    const first = createClickSpool({ dir, maxBytes: 1_000_000 });
    expect(first.append(batch('a'))).toBe(true);
    expect(first.append(batch('b', 3))).toBe(true);
    const bytes = first.bytes();
    expect(bytes).toBeGreaterThan(0);

    const again = createClickSpool({ dir, maxBytes: 1_000_000 }); // the next start finds them
    expect(again.bytes()).toBe(bytes);
    const sent: string[] = [];
    expect(await again.replay(async (b) => void sent.push(b.batchId))).toEqual({ batches: 2, clicks: 5, setAside: 0, reasons: [] });
    expect(sent).toEqual(['a', 'b']);
    expect(again.bytes()).toBe(0);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('refuses a batch past its byte limit, writing nothing', () => {
    const spool = createClickSpool({ dir: newDir(), maxBytes: 400 });
    expect(spool.append(batch('fits', 1))).toBe(true);
    const before = spool.bytes();
    expect(spool.append(batch('too-big', 20))).toBe(false);
    expect(spool.bytes()).toBe(before);
  });

  it('keeps a file whose replay failed, sends its batches again next time, and sets a torn last line aside', async () => {
    const dir = newDir();
    const spool = createClickSpool({ dir, maxBytes: 1_000_000 });
    spool.append(batch('x'));
    spool.append(batch('y'));
    appendFileSync(join(dir, 'spool.jsonl'), '{"batchId":"torn","clicks":[1,'); // a crash mid-write…
    const restarted = createClickSpool({ dir, maxBytes: 1_000_000 }); // …and the next start
    let calls = 0;
    await expect(
      restarted.replay(async () => {
        if (++calls === 2) throw new Error('Redis went away');
      }),
    ).rejects.toThrow('Redis went away');
    expect(restarted.bytes()).toBeGreaterThan(0);
    const sent: string[] = [];
    expect(await restarted.replay(async (b) => void sent.push(b.batchId))).toMatchObject({
      batches: 2,
      setAside: 1,
      reasons: ['not JSON (a write cut short)'],
    });
    expect(sent).toEqual(['x', 'y']); // x again: the worker records each batch id once
    expect(restarted.bytes()).toBe(0);
    // Kept for a person, once (the failed replay had not reached it), and no longer counted as waiting.
    expect(readFileSync(join(dir, SET_ASIDE_FILE), 'utf8')).toBe('{"batchId":"torn","clicks":[1,\n');
    expect(readdirSync(dir)).toEqual([SET_ASIDE_FILE]);
  });

  it('counts what is on disk, not what it wrote: bytes written behind its back are replayed and not subtracted twice', async () => {
    const dir = newDir();
    const spool = createClickSpool({ dir, maxBytes: 1_000_000 });
    spool.append(batch('a'));
    // Bytes it never counted (a write a full disk cut short, in an earlier version), a long torn line.
    appendFileSync(join(dir, 'spool.jsonl'), `{"batchId":"torn","clicks":[${'1,'.repeat(400)}`);
    expect(await spool.replay(async () => {})).toMatchObject({ batches: 1, setAside: 1 });
    expect(spool.bytes()).toBe(0);
    // A later, small spool is counted as it is, so the next replay sends it.
    expect(spool.append(batch('later', 1))).toBe(true);
    // The torn line went aside: a file of its own, not batches waiting.
    const size = readdirSync(dir)
      .filter((name) => name !== SET_ASIDE_FILE)
      .reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
    expect(spool.bytes()).toBe(size);
    const sent: string[] = [];
    await spool.replay(async (b) => void sent.push(b.batchId));
    expect(sent).toEqual(['later']);
    expect(spool.bytes()).toBe(0);
  });

  it('replays batches of every format its readers take, as written, and sets aside unknown and malformed ones with the reason', async () => {
    const dir = newDir();
    const spool = createClickSpool({ dir, maxBytes: 1_000_000, formats: NEXT_RELEASE_FORMATS });
    const next = PACKED_3.write({ batchId: 'next', clicks: [{ linkId: 'l', ts: 1, ip: '10.0.0.1', userAgent: 'ua', referrer: '' }] });
    const unknown = { ...batch('unknown'), format: 'packed-9' };
    const malformed = { ...batch('malformed'), clicks: [0, 0, 0] };
    for (const data of [batch('old', 3), unknown, next, malformed]) expect(spool.append(data)).toBe(true);
    const sent: unknown[] = [];
    expect(await spool.replay(async (data, clicks) => void sent.push([data, clicks]))).toEqual({
      batches: 2,
      clicks: 4,
      setAside: 2,
      reasons: ['unknown click batch format "packed-9"', 'job data is not a whole "packed-2" click batch'],
    });
    expect(sent).toEqual([
      [batch('old', 3), 3],
      [next, 1],
    ]);
    expect(readFileSync(join(dir, SET_ASIDE_FILE), 'utf8')).toBe(`${JSON.stringify(unknown)}\n${JSON.stringify(malformed)}\n`);
    expect(spool.bytes()).toBe(0);
    expect(spool.setAsidePath).toBe(join(dir, SET_ASIDE_FILE));

    // This release's readers (no packed-3): the next format is set aside, not dropped.
    const current = createClickSpool({ dir, maxBytes: 1_000_000 });
    current.append(next);
    expect(await current.replay(async () => {})).toMatchObject({
      batches: 0,
      setAside: 1,
      reasons: ['unknown click batch format "packed-3"'],
    });
    expect(readFileSync(join(dir, SET_ASIDE_FILE), 'utf8').trim().split('\n')).toHaveLength(3);
  });
});
