import { randomUUID } from 'node:crypto';
import {
  appendFileSync,
  createReadStream,
  mkdirSync,
  readdirSync,
  renameSync,
  statSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { PACKED_FIELDS, type PackedClickBatch } from '@deeplink/core';

/** The file new batches are appended to; replay renames it first, so appends never meet a replay. */
const CURRENT = 'spool.jsonl';
const REPLAY_PREFIX = 'replay-';
/** Written and removed at start to prove the directory takes writes; never a spool file. */
const WRITE_CHECK = '.write-check-';

/**
 * Makes sure `dir` is a directory this process can write to (creating it if needed), or throws
 * with the reason (EROFS, ENOTDIR, EACCES, ENOSPC…). A spool that cannot be written would lose
 * every click of the next Redis outage and of every shutdown during one.
 */
export function checkSpoolWritable(dir: string): void {
  mkdirSync(dir, { recursive: true });
  // A name of its own: redirectors starting side by side on one directory do not remove each other's.
  const probe = join(dir, `${WRITE_CHECK}${randomUUID()}`);
  writeFileSync(probe, `${process.pid}\n`);
  unlinkSync(probe);
}

export interface ClickSpoolOptions {
  dir: string;
  maxBytes: number;
  /** Called with the error of each append the disk refused (full, read-only, gone). */
  onWriteError?: (error: unknown) => void;
}

/**
 * An append-only journal of sealed click batches on local disk, for while the queue's Redis is
 * unreachable and for shutdown: one JSON batch per line, with its batch id, bounded by bytes.
 * Replayed into the queue when Redis is back and at the next start; the worker records each
 * batch id once, so a batch replayed twice (a crash mid-replay) is still counted once.
 */
export function createClickSpool({ dir, maxBytes, onWriteError }: ClickSpoolOptions) {
  mkdirSync(dir, { recursive: true });
  const files = () => readdirSync(dir).filter((name) => name === CURRENT || (name.startsWith(REPLAY_PREFIX) && name.endsWith('.jsonl')));
  const sizeOf = (name: string) => {
    try {
      return statSync(join(dir, name)).size;
    } catch {
      return 0; // gone since it was listed (a replay finished it)
    }
  };
  /** What the spool holds on disk: the one source of truth whenever a write or a replay went wrong. */
  const bytesOnDisk = () => {
    try {
      return files().reduce((sum, name) => sum + sizeOf(name), 0);
    } catch {
      return 0; // the directory itself is gone or unreadable: nothing there can be replayed
    }
  };
  let bytes = bytesOnDisk();
  /** Size of the current file, to cut a write that a full disk left half done. */
  let currentBytes = sizeOf(CURRENT);
  /** True from an append the disk refused until one it takes. */
  let failing = false;
  let replaySeq = 0;

  return {
    /** Bytes of batches waiting in the spool. */
    bytes: () => bytes,

    /** Whether the last append was refused by the disk (not by the byte limit). */
    failing: () => failing,

    /**
     * Appends a batch (synchronously: it is on disk when this returns, up to the OS's write-back).
     * Returns false, writing nothing, when the spool would grow past its limit or the write fails.
     */
    append(batch: PackedClickBatch): boolean {
      const line = `${JSON.stringify(batch)}\n`;
      const size = Buffer.byteLength(line);
      if (bytes + size > maxBytes) return false;
      const path = join(dir, CURRENT);
      try {
        appendFileSync(path, line);
      } catch (error) {
        // A full disk takes part of the line before it refuses the rest: cut that part off, so the
        // next batch starts a line of its own, and count what the disk really holds.
        try {
          truncateSync(path, currentBytes);
        } catch {
          // No file (it could not be created) or no way to cut it: replay skips a torn line.
        }
        currentBytes = sizeOf(CURRENT);
        bytes = bytesOnDisk();
        failing = true;
        onWriteError?.(error);
        return false;
      }
      currentBytes += size;
      bytes += size;
      failing = false;
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
        currentBytes = 0;
      }
      const result = { batches: 0, clicks: 0, skipped: 0 };
      try {
        for (const name of files()
          .filter((file) => file !== CURRENT)
          .sort()) {
          const path = join(dir, name);
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
        }
      } finally {
        // Counted from the files themselves, finished or not: the next tick replays whatever is left.
        bytes = bytesOnDisk();
      }
      return result;
    },
  };
}

export type ClickSpool = ReturnType<typeof createClickSpool>;
