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
import { CLICK_BATCH_FORMATS, type ClickBatchFormats, type ClickJobData, readClickJobData } from '@deeplink/core';

/** The file new batches are appended to; replay renames it first, so appends never meet a replay. */
const CURRENT = 'spool.jsonl';
const REPLAY_PREFIX = 'replay-';
/**
 * Where replay puts lines that are not a batch it can read (a write cut short by a crash, a format
 * this release does not read, say after a downgrade), for a person to look at: never replayed, never
 * counted in the spool's bytes, never removed by the service.
 */
export const SET_ASIDE_FILE = 'set-aside.jsonl';
/** Distinct reasons a replay reports for the lines it set aside; the count covers the rest. */
const MAX_REASONS = 5;
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
  /** The formats replay reads batches with (default: this release's). */
  formats?: ClickBatchFormats;
}

/** What one replay did: batches and clicks sent, and lines set aside (SET_ASIDE_FILE) with why. */
export interface SpoolReplay {
  batches: number;
  clicks: number;
  setAside: number;
  reasons: string[];
}

/** Why a spooled line cannot be replayed, or the batch's data and its clicks. */
function readLine(line: string, formats: ClickBatchFormats): { data: ClickJobData; clicks: number } | { problem: string } {
  let data: unknown;
  try {
    data = JSON.parse(line);
  } catch {
    return { problem: 'not JSON (a write cut short)' };
  }
  const reading = readClickJobData(data, formats);
  // What goes to the queue is the line as written, in its own format: the worker reads it with the same readers.
  return 'batch' in reading ? { data: data as ClickJobData, clicks: reading.batch.clicks.length } : reading;
}

/**
 * An append-only journal of sealed click batches on local disk, for while the queue's Redis is
 * unreachable and for shutdown: one JSON batch per line, with its batch id, bounded by bytes.
 * Replayed into the queue when Redis is back and at the next start; the worker records each
 * batch id once, so a batch replayed twice (a crash mid-replay) is still counted once.
 */
export function createClickSpool({ dir, maxBytes, onWriteError, formats = CLICK_BATCH_FORMATS }: ClickSpoolOptions) {
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

    /** The file of lines replay set aside (see SET_ASIDE_FILE). */
    setAsidePath: join(dir, SET_ASIDE_FILE),

    /** Whether the last append was refused by the disk (not by the byte limit). */
    failing: () => failing,

    /**
     * Appends a batch (synchronously: it is on disk when this returns, up to the OS's write-back).
     * Returns false, writing nothing, when the spool would grow past its limit or the write fails.
     */
    append(batch: ClickJobData): boolean {
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
     * Sends every spooled batch to `add` with its clicks, oldest first, deleting each file once all its batches
     * went. Stops at the first failure, keeping that file (its earlier batches go again next
     * time). A line that is not a batch of a readable format, read with the same readers as the
     * worker's, is moved to SET_ASIDE_FILE and counted, never dropped.
     */
    async replay(add: (batch: ClickJobData, clicks: number) => Promise<void>): Promise<SpoolReplay> {
      // The current file is taken for replay only once every earlier one is done: a replay that
      // keeps failing (Redis still away) leaves one file behind, not one per attempt.
      const names = files();
      if (names.length === 1 && names[0] === CURRENT) {
        renameSync(join(dir, CURRENT), join(dir, `${REPLAY_PREFIX}${Date.now()}-${String(replaySeq++).padStart(6, '0')}.jsonl`));
        currentBytes = 0;
      }
      const result: SpoolReplay = { batches: 0, clicks: 0, setAside: 0, reasons: [] };
      try {
        for (const name of files()
          .filter((file) => file !== CURRENT)
          .sort()) {
          const path = join(dir, name);
          const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
          for await (const line of lines) {
            const read = readLine(line, formats);
            if ('problem' in read) {
              // Synchronous, before the file is deleted: a line that cannot be set aside stops the replay and stays.
              appendFileSync(join(dir, SET_ASIDE_FILE), `${line}\n`);
              result.setAside++;
              if (result.reasons.length < MAX_REASONS && !result.reasons.includes(read.problem)) result.reasons.push(read.problem);
              continue;
            }
            await add(read.data, read.clicks);
            result.batches++;
            result.clicks += read.clicks;
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
