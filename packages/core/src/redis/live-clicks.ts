// The live click feed's wire format between the worker, which appends an entry per user after each
// rollup commit, and the API, which streams the entries to the user's open live streams.
import type { RedisClient } from './client.js';
import type { RedisKeys } from './keys.js';

/** Entries a user's history keeps, about (XADD MAXLEN ~ trims whole stream nodes, so a few more may stay). */
export const LIVE_HISTORY_ENTRIES = 300;
/** A user's history is deleted this long after its last entry, so idle accounts keep nothing in Redis. */
export const LIVE_HISTORY_TTL_MS = 10 * 60_000;
/**
 * The newest clicks one entry keeps for all of the user's links together. A link's stream lists its
 * own among them, so it shows up to LIVE_RECENT_CLICKS of them unless the account's other links
 * had more than this many newer clicks in the same commit.
 */
export const LIVE_ENTRY_RECENT_CLICKS = 100;
/** Entries read at most when a stream resumes (more than the history holds). */
export const LIVE_RESUME_MAX_ENTRIES = 1_000;

/** One counted click as a live stream shows it: no address, agent string or visitor hash. */
export interface LiveClick {
  /** When it happened (ISO). */
  at: string;
  linkId: string;
  /** The values the rollups store: platform `android|ios|desktop`, country code or Unknown, names, referrer host or direct. */
  platform: string;
  country: string;
  browser: string;
  os: string;
  referrer: string;
}

/** What one rollup commit added to one user's links. */
export interface LiveEntry {
  /** When the commit was made (ISO). */
  at: string;
  /** Clicks per link id. */
  links: Record<string, number>;
  /** The newest clicks first, at most LIVE_ENTRY_RECENT_CLICKS. */
  recent: LiveClick[];
}

/** An entry as read back, with its stream entry id (`<ms>-<seq>`, ordered, the SSE event id). */
export interface StoredLiveEntry extends LiveEntry {
  id: string;
}

const ENTRY_FIELD = 'entry';

// One round trip, and the id Redis gives the entry travels in the announcement, so a subscriber
// never has to read the stream to learn it.
const APPEND_SCRIPT = `
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', '${ENTRY_FIELD}', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PUBLISH', ARGV[4], id .. ' ' .. ARGV[2])
return id`;

/** Appends `entry` to the user's history and announces it to every API instance; resolves its id. */
export async function appendLiveEntry(redis: RedisClient, keys: RedisKeys, userId: string, entry: LiveEntry): Promise<string> {
  const id = await redis.eval(
    APPEND_SCRIPT,
    1,
    keys.liveClicks(userId),
    LIVE_HISTORY_ENTRIES,
    JSON.stringify(entry),
    LIVE_HISTORY_TTL_MS,
    keys.liveAnnouncements(userId),
  );
  return String(id);
}

/** A stream entry id as Redis writes them. */
export const LIVE_ENTRY_ID = /^\d{1,20}-\d{1,20}$/;

/** The time part of an entry id, in epoch milliseconds. */
export const liveEntryTime = (id: string): number => Number(id.slice(0, id.indexOf('-')));

/** Orders two entry ids (negative when `a` comes first). */
export function compareLiveEntryIds(a: string, b: string): number {
  const [aMs, aSeq] = a.split('-').map(BigInt) as [bigint, bigint];
  const [bMs, bSeq] = b.split('-').map(BigInt) as [bigint, bigint];
  if (aMs !== bMs) return aMs < bMs ? -1 : 1;
  return aSeq === bSeq ? 0 : aSeq < bSeq ? -1 : 1;
}

/** The entry in a stored or announced JSON text, or undefined when it is not one. */
export function parseLiveEntry(text: string): LiveEntry | undefined {
  try {
    const value = JSON.parse(text) as Partial<LiveEntry> | null;
    if (!value || typeof value.at !== 'string' || typeof value.links !== 'object' || !Array.isArray(value.recent)) return undefined;
    return value as LiveEntry;
  } catch {
    return undefined;
  }
}

/** An announcement (`<id> <entry JSON>`) read back, or undefined when it is not one. */
export function parseLiveAnnouncement(message: string): StoredLiveEntry | undefined {
  const space = message.indexOf(' ');
  const id = message.slice(0, space);
  if (space < 0 || !LIVE_ENTRY_ID.test(id)) return undefined;
  const entry = parseLiveEntry(message.slice(space + 1));
  return entry && { ...entry, id };
}

/**
 * The user's stored entries from `start` (an entry id, `(<id>` for after it, or a time in
 * milliseconds) on, oldest first, at most `count`.
 */
export async function readLiveEntries(
  redis: RedisClient,
  keys: RedisKeys,
  userId: string,
  start: string,
  count = LIVE_RESUME_MAX_ENTRIES,
): Promise<StoredLiveEntry[]> {
  const rows = await redis.xrange(keys.liveClicks(userId), start, '+', 'COUNT', count);
  const entries: StoredLiveEntry[] = [];
  for (const [id, fields] of rows) {
    const at = fields.indexOf(ENTRY_FIELD);
    const text = at >= 0 ? fields[at + 1] : undefined;
    const entry = text === undefined ? undefined : parseLiveEntry(text);
    if (entry) entries.push({ ...entry, id });
  }
  return entries;
}
