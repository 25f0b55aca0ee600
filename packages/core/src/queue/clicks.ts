/** The BullMQ queue between the redirector and the worker. */
export const CLICK_QUEUE = 'clicks';
export const CLICK_BATCH_JOB = 'batch';

/**
 * Job options: the worker retries a failing batch; failed jobs stay for inspection. Completed jobs
 * are removed at once: they hold client addresses, and exactly-once rests on the batch ids the
 * worker records in PostgreSQL, not on BullMQ's job history.
 */
export const CLICK_JOB_OPTIONS = {
  attempts: 10,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: true,
  // How long failed batches stay is the worker's setting (FAILED_BATCH_RETENTION_*), not the producer's.
} as const;

/** Starts the failure reason of a batch that can never succeed (unreadable data): it is never retried. */
export const POISON_REASON = 'poison:';

/** One visit as the redirector saw it. The worker derives everything else from these fields. */
export interface ClickEvent {
  linkId: string;
  /** Epoch milliseconds when the redirect was answered. */
  ts: number;
  /** Client address; used only to derive country and the visitor hash, never stored. */
  ip: string;
  userAgent: string;
  /** Referer header, or '' for a direct visit. */
  referrer: string;
}

/**
 * A batch of clicks as objects, with an id that makes its rollup idempotent: what the worker reads
 * a packed batch into, and what test and benchmark producers pack (packClickBatch). Never job data.
 */
export interface ClickBatch {
  batchId: string;
  clicks: ClickEvent[];
}

/** Marks a PackedClickBatch; a later layout would get a new value. */
export const PACKED_FORMAT = 'packed-1';
/** Numbers per click in PackedClickBatch.clicks: time offset, then string indexes of link, ip, agent, referrer. */
export const PACKED_FIELDS = 5;

/**
 * What the redirector queues: a batch whose repeated strings (link ids, user agents, referrers,
 * addresses) are written once. A viral link's clicks share one link id and a handful of agents, so
 * this is several times smaller than ClickBatch in Redis and cheaper to serialise and parse.
 * Click i is clicks[5i..5i+4]: ts - since, then indexes into `strings` of linkId, ip, userAgent, referrer.
 */
export interface PackedClickBatch {
  batchId: string;
  format: typeof PACKED_FORMAT;
  /** Epoch milliseconds the click times are offsets from. */
  since: number;
  strings: string[];
  clicks: number[];
}

/**
 * One layout of a click batch in job data, named by the data's `format` field. Each format can read
 * its own data back and write a batch in it; batch-formats.ts lists the formats a release reads.
 */
export interface ClickBatchFormat {
  readonly name: string;
  /** The batch in `data` (an object whose `format` is this one's name), or undefined when it is not a whole batch. */
  read(data: Record<string, unknown>): ClickBatch | undefined;
  /** Job data of this format holding `batch`. */
  write(batch: ClickBatch): ClickJobData;
}

/** What every format's job data has in common: the click queue's job data, whatever its layout. */
export interface ClickJobData {
  format: string;
  batchId: string;
}

/** Builds one PackedClickBatch click by click; add() is cheap enough for the redirect path. */
export class PackedClickBatchBuilder {
  private readonly indexes = new Map<string, number>();
  private readonly strings: string[] = [];
  private readonly clicks: number[] = [];
  private since = 0;
  /** Clicks added so far. */
  size = 0;

  add(click: ClickEvent): void {
    if (this.size === 0) this.since = click.ts;
    this.clicks.push(
      click.ts - this.since,
      this.intern(click.linkId),
      this.intern(click.ip),
      this.intern(click.userAgent),
      this.intern(click.referrer),
    );
    this.size++;
  }

  build(batchId: string): PackedClickBatch {
    return { batchId, format: PACKED_FORMAT, since: this.since, strings: this.strings, clicks: this.clicks };
  }

  private intern(value: string): number {
    let index = this.indexes.get(value);
    if (index === undefined) {
      index = this.strings.push(value) - 1;
      this.indexes.set(value, index);
    }
    return index;
  }
}

/** Packs clicks given as objects (test and benchmark producers use this to queue what the redirector queues). */
export function packClickBatch({ batchId, clicks }: ClickBatch): PackedClickBatch {
  const builder = new PackedClickBatchBuilder();
  for (const click of clicks) builder.add(click);
  return builder.build(batchId);
}

/**
 * Reads a packed batch's clicks back into objects, or undefined for data that is not a whole
 * packed batch (such a job can never succeed). The values of the clicks are left for the worker to judge.
 */
function readPackedClickBatch(data: Record<string, unknown>): ClickBatch | undefined {
  if (data.format !== PACKED_FORMAT || typeof data.batchId !== 'string' || !Array.isArray(data.clicks)) return undefined;
  const { batchId, clicks, since, strings } = data;
  if (!Number.isFinite(since) || !Array.isArray(strings) || !strings.every((s) => typeof s === 'string')) return undefined;
  if (clicks.length % PACKED_FIELDS !== 0) return undefined;
  const text = strings as string[];
  const string = (index: unknown) => (Number.isInteger(index) && (index as number) >= 0 ? text[index as number] : undefined);
  const events: ClickEvent[] = new Array(clicks.length / PACKED_FIELDS);
  for (let i = 0, c = 0; i < clicks.length; i += PACKED_FIELDS, c++) {
    const offset = clicks[i];
    const linkId = string(clicks[i + 1]);
    const ip = string(clicks[i + 2]);
    const userAgent = string(clicks[i + 3]);
    const referrer = string(clicks[i + 4]);
    if (typeof offset !== 'number' || !Number.isFinite(offset)) return undefined;
    if (linkId === undefined || ip === undefined || userAgent === undefined || referrer === undefined) return undefined;
    events[c] = { linkId, ts: (since as number) + offset, ip, userAgent, referrer };
  }
  return { batchId, clicks: events };
}

/** `packed-1`: what the redirector writes (PackedClickBatchBuilder) since packed batches exist. */
export const PACKED_1: ClickBatchFormat = { name: PACKED_FORMAT, read: readPackedClickBatch, write: packClickBatch };
