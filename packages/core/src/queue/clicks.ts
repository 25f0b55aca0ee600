import {
  type AppEvent,
  type AppEventPlatform,
  type InstallClick,
  isAppEventName,
  isAppEventPlatform,
  redirectEventId,
} from './app-events.js';

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
  /** App events beside the clicks (packed-2 on); none when absent. */
  appEvents?: AppEvent[];
}

/** Marks a PackedClickBatch of the layout written now; a later layout gets a new value. */
export const PACKED_FORMAT = 'packed-2';
/** The previous layout: the same clicks, no app events. Still read (see batch-formats.ts). */
export const PACKED_1_FORMAT = 'packed-1';
/** Numbers per click in PackedClickBatch.clicks: time offset, then string indexes of link, ip, agent, referrer. */
export const PACKED_FIELDS = 5;
/**
 * Numbers per app event in PackedClickBatch.events: time offset, string indexes of link, name and
 * platform, then the string index of its id, or -1 when the event came with a click: the index of
 * that click (its id is then redirectEventId(batchId, click)), else -1; then the string indexes of
 * its install token and language (InstallClick), and of its visitor (AppEvent.visitor), each -1
 * when absent. A store REDIRECT never carries a visitor (the worker hashes its click's), so the
 * redirect path adds no string for it.
 */
export const PACKED_EVENT_FIELDS = 9;

/**
 * What the redirector queues: a batch whose repeated strings (link ids, user agents, referrers,
 * addresses, event names) are written once. A viral link's clicks share one link id and a handful
 * of agents, so this is several times smaller than ClickBatch in Redis and cheaper to serialise and
 * parse. Click i is clicks[5i..5i+4]: ts - since, then indexes into `strings` of linkId, ip,
 * userAgent, referrer. App event j is events[9j..9j+8] (PACKED_EVENT_FIELDS).
 */
export interface PackedClickBatch {
  batchId: string;
  format: typeof PACKED_FORMAT;
  /** Epoch milliseconds the click and event times are offsets from. */
  since: number;
  strings: string[];
  clicks: number[];
  events: number[];
}

/**
 * One layout of a click batch in job data, named by the data's `format` field. Each format can read
 * its own data back and write a batch in it; batch-formats.ts lists the formats a release reads.
 */
export interface ClickBatchFormat {
  readonly name: string;
  /** The batch in `data` (an object whose `format` is this one's name), or undefined when it is not a whole batch. */
  read(data: Record<string, unknown>): ClickBatch | undefined;
  /** Job data of this format holding `batch` (a format without app events leaves them out). */
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
  private readonly events: number[] = [];
  private since: number | undefined;
  /** Clicks added so far. */
  size = 0;

  /**
   * Adds a click; `redirectedTo` names the platform when the answer sent the visitor to an app
   * store, which adds a REDIRECT event with it, and `install` what that answer handed the visitor
   * for install attribution. A plain click allocates nothing beyond its numbers.
   */
  add(click: ClickEvent, redirectedTo?: AppEventPlatform, install?: InstallClick): void {
    this.since ??= click.ts;
    const offset = click.ts - this.since;
    const link = this.intern(click.linkId);
    this.clicks.push(offset, link, this.intern(click.ip), this.intern(click.userAgent), this.intern(click.referrer));
    if (redirectedTo !== undefined) {
      this.events.push(offset, link, this.intern('REDIRECT'), this.intern(redirectedTo), -1, this.size);
      this.pushInstall(install);
      this.events.push(-1);
    }
    this.size++;
  }

  /**
   * Adds an app event: one that came without a click (an app open) with its own id, or one with a
   * `clickIndex` as the click's event, its id derived from the batch id and that index (so a
   * batch read and written again, say with its addresses hashed, keeps its events as they were).
   */
  addEvent(event: AppEvent): void {
    this.since ??= event.ts;
    const fromClick = event.clickIndex !== undefined;
    this.events.push(
      event.ts - this.since,
      this.intern(event.linkId),
      this.intern(event.name),
      this.intern(event.platform),
      fromClick ? -1 : this.intern(event.eventId),
      fromClick ? (event.clickIndex as number) : -1,
    );
    this.pushInstall(event.install);
    // An install's APP_INSTALL and APP_FIRST_OPEN share their visitor: written once.
    this.events.push(event.visitor === undefined ? -1 : this.intern(event.visitor));
  }

  build(batchId: string): PackedClickBatch {
    const { strings, clicks, events } = this;
    return { batchId, format: PACKED_FORMAT, since: this.since ?? 0, strings, clicks, events };
  }

  /** Ends an event with its token and language fields: tokens are unique, so only the language is interned. */
  private pushInstall(install: InstallClick | undefined): void {
    if (install === undefined) {
      this.events.push(-1, -1);
      return;
    }
    const token = this.strings.push(install.token) - 1;
    this.events.push(token, install.language === undefined ? -1 : this.intern(install.language));
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

/**
 * Packs a batch given as objects (the API's opens, and test and benchmark producers that queue what
 * the redirector queues). An event is packed with its own id, or as its click's when it names one
 * (`clickIndex`).
 */
export function packClickBatch({ batchId, clicks, appEvents = [] }: ClickBatch): PackedClickBatch {
  const builder = new PackedClickBatchBuilder();
  for (const click of clicks) builder.add(click);
  for (const event of appEvents) builder.addEvent(event);
  return builder.build(batchId);
}

/** The parts of a packed batch of either layout after its header is checked. */
interface PackedParts {
  batchId: string;
  since: number;
  strings: string[];
  clicks: unknown[];
}

/** Checks what packed-1 and packed-2 share, or undefined when the data is not a whole batch. */
function packedParts(data: Record<string, unknown>, format: string): PackedParts | undefined {
  if (data.format !== format || typeof data.batchId !== 'string' || !Array.isArray(data.clicks)) return undefined;
  const { batchId, clicks, since, strings } = data;
  if (typeof since !== 'number' || !Number.isFinite(since)) return undefined;
  if (!Array.isArray(strings) || !strings.every((s) => typeof s === 'string')) return undefined;
  if (clicks.length % PACKED_FIELDS !== 0) return undefined;
  return { batchId, since, strings, clicks };
}

/** A string of the batch by index, or undefined for an index that names none. */
const stringAt = (strings: string[], index: unknown): string | undefined =>
  Number.isInteger(index) && (index as number) >= 0 ? strings[index as number] : undefined;

/** The clicks of a packed batch as objects, or undefined when one is not whole. */
function readClicks({ since, strings, clicks }: PackedParts): ClickEvent[] | undefined {
  const events: ClickEvent[] = new Array(clicks.length / PACKED_FIELDS);
  for (let i = 0, c = 0; i < clicks.length; i += PACKED_FIELDS, c++) {
    const offset = clicks[i];
    const linkId = stringAt(strings, clicks[i + 1]);
    const ip = stringAt(strings, clicks[i + 2]);
    const userAgent = stringAt(strings, clicks[i + 3]);
    const referrer = stringAt(strings, clicks[i + 4]);
    if (typeof offset !== 'number' || !Number.isFinite(offset)) return undefined;
    if (linkId === undefined || ip === undefined || userAgent === undefined || referrer === undefined) return undefined;
    events[c] = { linkId, ts: since + offset, ip, userAgent, referrer };
  }
  return events;
}

/** The app events of a packed-2 batch as objects, or undefined when one is not whole. */
function readAppEvents({ batchId, since, strings, clicks }: PackedParts, events: unknown[]): AppEvent[] | undefined {
  if (events.length % PACKED_EVENT_FIELDS !== 0) return undefined;
  const clickCount = clicks.length / PACKED_FIELDS;
  const read: AppEvent[] = new Array(events.length / PACKED_EVENT_FIELDS);
  for (let i = 0, e = 0; i < events.length; i += PACKED_EVENT_FIELDS, e++) {
    const offset = events[i];
    const linkId = stringAt(strings, events[i + 1]);
    const name = stringAt(strings, events[i + 2]);
    const platform = stringAt(strings, events[i + 3]);
    const click = events[i + 5];
    const ownId = stringAt(strings, events[i + 4]);
    const fromClick = Number.isInteger(click) && (click as number) >= 0 && (click as number) < clickCount;
    const eventId = ownId ?? (fromClick ? redirectEventId(batchId, click as number) : undefined);
    if (typeof offset !== 'number' || !Number.isFinite(offset) || linkId === undefined || eventId === undefined) return undefined;
    if (!isAppEventName(name) || !isAppEventPlatform(platform)) return undefined;
    const event: AppEvent = { eventId, name, platform, linkId, ts: since + offset };
    if (ownId === undefined) event.clickIndex = click as number;
    const token = stringAt(strings, events[i + 6]);
    if (token !== undefined) {
      const language = stringAt(strings, events[i + 7]);
      event.install = language === undefined ? { token } : { token, language };
    }
    const visitor = stringAt(strings, events[i + 8]);
    if (visitor !== undefined) event.visitor = visitor;
    read[e] = event;
  }
  return read;
}

/**
 * Reads a packed-2 batch back into objects, or undefined for data that is not a whole batch (such
 * a job can never succeed). The values of the clicks are left for the worker to judge.
 */
function readPackedClickBatch(data: Record<string, unknown>): ClickBatch | undefined {
  const parts = packedParts(data, PACKED_FORMAT);
  if (!parts || !Array.isArray(data.events)) return undefined;
  const clicks = readClicks(parts);
  const appEvents = clicks && readAppEvents(parts, data.events);
  if (!appEvents) return undefined;
  // Most batches hold clicks alone: they read as a packed-1 batch would.
  return appEvents.length === 0 ? { batchId: parts.batchId, clicks } : { batchId: parts.batchId, clicks, appEvents };
}

/** `packed-2`: what the redirector (PackedClickBatchBuilder) and the API's opens write: clicks and app events. */
export const PACKED_2: ClickBatchFormat = { name: PACKED_FORMAT, read: readPackedClickBatch, write: packClickBatch };

/**
 * `packed-1`: clicks only, written by the releases before app events. Its writer remains for
 * upgrade tests; it leaves a batch's app events out.
 */
export const PACKED_1: ClickBatchFormat = {
  name: PACKED_1_FORMAT,
  read(data) {
    const parts = packedParts(data, PACKED_1_FORMAT);
    const clicks = parts && readClicks(parts);
    return clicks && { batchId: parts.batchId, clicks };
  },
  write(batch) {
    const { events: _, ...packed } = packClickBatch({ batchId: batch.batchId, clicks: batch.clicks });
    return { ...packed, format: PACKED_1_FORMAT };
  },
};
