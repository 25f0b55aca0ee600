import { appendFileSync, createReadStream, mkdirSync, readdirSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { PACKED_FIELDS, type PackedClickBatch } from '@deeplink/core';

/** The file new batches are appended to; replay renames it first, so appends never meet a replay. */
const CURRENT = 'spool.jsonl';
const REPLAY_PREFIX = 'replay-';

/**
 * An append-only journal of sealed click batches on local disk, for while the queue's Redis is
 * unreachable and for shutdown: one JSON batch per line, with its batch id, bounded by bytes.
 * Replayed into the queue when Redis is back and at the next start; the worker records each
 * batch id once, so a batch replayed twice (a crash mid-replay) is still counted once.
 */
export function createClickSpool({ dir, maxBytes }: { dir: string; maxBytes: number }) {
  mkdirSync(dir, { recursive: true });
  const files = () => readdirSync(dir).filter((name) => name === CURRENT || (name.startsWith(REPLAY_PREFIX) && name.endsWith('.jsonl')));
  let bytes = files().reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
  let replaySeq = 0;

  return {
    /** Bytes of batches waiting in the spool. */
    bytes: () => bytes,

    /**
     * Appends a batch (synchronously: it is on disk when this returns, up to the OS's write-back).
     * Returns false, writing nothing, when the spool would grow past its limit or the write fails.
     */
    append(batch: PackedClickBatch): boolean {
      const line = `${JSON.stringify(batch)}\n`;
      const size = Buffer.byteLength(line);
      if (bytes + size > maxBytes) return false;
      try {
        appendFileSync(join(dir, CURRENT), line);
      } catch {
        return false;
      }
      bytes += size;
      return true;
    },

    /**
     * Sends every spooled batch to `add`, oldest first, deleting each file once all its batches
     * went. Stops at the first failure, keeping that file (its earlier batches go again next
     * time). Lines that are not a batch (a write cut short by a crash) are skipped and counted.
     */
    async replay(add: (batch: PackedClickBatch) => Promise<void>): Promise<{ batches: number; clicks: number; skipped: number }> {
      // The current file is taken for replay only once every earlier one is done: a replay that
      // keeps failing (Redis still away) leaves one file behind, not one per attempt.
      const names = files();
      if (names.length === 1 && names[0] === CURRENT) {
        renameSync(join(dir, CURRENT), join(dir, `${REPLAY_PREFIX}${Date.now()}-${String(replaySeq++).padStart(6, '0')}.jsonl`));
      }
      const result = { batches: 0, clicks: 0, skipped: 0 };
      for (const name of files().filter((file) => file !== CURRENT).sort()) {
        const path = join(dir, name);
        const size = statSync(path).size;
        const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
        for await (const line of lines) {
          let batch: PackedClickBatch;
          try {
            batch = JSON.parse(line) as PackedClickBatch;
            if (typeof batch.batchId !== 'string' || !Array.isArray(batch.clicks)) throw new Error('not a batch');
          } catch {
            result.skipped++;
            continue;
          }
          await add(batch);
          result.batches++;
          result.clicks += batch.clicks.length / PACKED_FIELDS;
        }
        unlinkSync(path);
        bytes -= size;
      }
      return result;
    },
  };
}

export type ClickSpool = ReturnType<typeof createClickSpool>;
