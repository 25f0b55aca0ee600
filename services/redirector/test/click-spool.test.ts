import { appendFileSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { packClickBatch, type PackedClickBatch } from '@deeplink/core';
import { createClickSpool } from '../src/click-spool.js';

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
    expect(await again.replay(async (b) => void sent.push(b.batchId))).toEqual({ batches: 2, clicks: 5, skipped: 0 });
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

  it('keeps a file whose replay failed, sends its batches again next time, and skips a torn last line', async () => {
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
    expect(await restarted.replay(async (b) => void sent.push(b.batchId))).toMatchObject({ batches: 2, skipped: 1 });
    expect(sent).toEqual(['x', 'y']); // x again: the worker records each batch id once
    expect(restarted.bytes()).toBe(0);
  });

  it('counts what is on disk, not what it wrote: bytes written behind its back are replayed and not subtracted twice', async () => {
    const dir = newDir();
    const spool = createClickSpool({ dir, maxBytes: 1_000_000 });
    spool.append(batch('a'));
    // Bytes it never counted (a write a full disk cut short, in an earlier version), a long torn line.
    appendFileSync(join(dir, 'spool.jsonl'), `{"batchId":"torn","clicks":[${'1,'.repeat(400)}`);
    expect(await spool.replay(async () => {})).toMatchObject({ batches: 1, skipped: 1 });
    expect(spool.bytes()).toBe(0);
    // A later, small spool is counted as it is, so the next replay sends it.
    expect(spool.append(batch('later', 1))).toBe(true);
    const size = readdirSync(dir).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
    expect(spool.bytes()).toBe(size);
    const sent: string[] = [];
    await spool.replay(async (b) => void sent.push(b.batchId));
    expect(sent).toEqual(['later']);
    expect(spool.bytes()).toBe(0);
  });
});
