import { createHash } from 'node:crypto';
import { type ClickBatch, type ClickBatchFormat, PACKED_1, PACKED_2 } from './clicks.js';

/**
 * The click batch formats one release reads, by name, and the one it writes. Batches outlive a
 * deploy: in the queue, in the failed set (retried for FAILED_BATCH_RETENTION_DAYS) and in a
 * redirector's spool. So the policy: when the written format changes, the previous one stays in
 * `readable` for at least one more release, and a format leaves the list only in a release whose
 * upgrade notes say so (docs/operations.md, "Upgrading").
 */
export interface ClickBatchFormats {
  /** The format new batches are written in. */
  current: ClickBatchFormat;
  /** Every format a batch may be read from, the current one included, by name. */
  readable: ReadonlyMap<string, ClickBatchFormat>;
}

/** The registry of a release: `current` is written, it and `older` are read. */
export function clickBatchFormats(current: ClickBatchFormat, ...older: ClickBatchFormat[]): ClickBatchFormats {
  return { current, readable: new Map([current, ...older].map((format) => [format.name, format])) };
}

/**
 * This release's formats: it writes `packed-2` (clicks and app events) and still reads `packed-1`
 * (clicks only), which the previous release wrote. Workers must be upgraded before redirectors and
 * the API, so that no packed-2 batch meets a worker that cannot read it.
 */
export const CLICK_BATCH_FORMATS = clickBatchFormats(PACKED_2, PACKED_1);

/** A job's data read through its format's reader, or why it cannot be (such a job can never succeed). */
export type ClickJobReading = { batch: ClickBatch; format: ClickBatchFormat } | { problem: string };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/** Reads job data with the reader its `format` names; a format not in `formats` is a problem like malformed data. */
export function readClickJobData(data: unknown, formats: ClickBatchFormats = CLICK_BATCH_FORMATS): ClickJobReading {
  if (!isObject(data) || typeof data.format !== 'string') return { problem: 'job data is not a click batch' };
  const format = formats.readable.get(data.format);
  // The name is the data's own: quoted as JSON, so that no control character or quote reaches a log line as is.
  if (!format) return { problem: `unknown click batch format ${JSON.stringify(data.format.slice(0, 40))}` };
  const batch = format.read(data);
  return batch ? { batch, format } : { problem: `job data is not a whole "${format.name}" click batch` };
}

/** The batch in job data of any readable format, or undefined for data that is not one. */
export function readClickJob(data: unknown, formats: ClickBatchFormats = CLICK_BATCH_FORMATS): ClickBatch | undefined {
  const reading = readClickJobData(data, formats);
  return 'batch' in reading ? reading.batch : undefined;
}

/** What replaces a client address in a batch kept for inspection: enough to tell visitors apart, not to find them. */
const hashedAddress = (ip: string) => `sha256:${createHash('sha256').update(ip).digest('hex').slice(0, 16)}`;

/**
 * Job data with its client addresses replaced by hashes, for a batch that failed for good and is
 * kept for a person to inspect; written back in the batch's own format, so that a retry reads it
 * as before. Data no reader takes is replaced whole: it may hold addresses anywhere.
 */
export function scrubClickJob(data: unknown, formats: ClickBatchFormats = CLICK_BATCH_FORMATS): unknown {
  const reading = readClickJobData(data, formats);
  if (!('batch' in reading)) return { scrubbed: 'unreadable batch data removed' };
  const { batch, format } = reading;
  return format.write({ ...batch, clicks: batch.clicks.map((click) => ({ ...click, ip: hashedAddress(click.ip) })) });
}
