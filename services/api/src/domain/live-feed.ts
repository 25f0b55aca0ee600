import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { once } from 'node:events';
import { AppError, LIVE_RECENT_CLICKS, type RedisKeys, rateLimited } from '@deeplink/core';
import {
  compareLiveEntryIds,
  liveEntryTime,
  parseLiveAnnouncement,
  readLiveEntries,
  type LiveEntry,
  type RedisClient,
  type StoredLiveEntry,
} from '@deeplink/core/redis';
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import type { LiveStreamSlots } from './live-stream-slots.js';

/** perSecond is the scope's clicks over this window, divided by its seconds. */
export const LIVE_RATE_WINDOW_MS = 10_000;
/** Unsent bytes past which a stream whose client does not read is closed. */
export const LIVE_SEND_BUFFER_BYTES = 64 * 1024;
/** Messages one stream may have waiting while it sends its missed history; past it the stream is closed. */
const MAX_HELD_MESSAGES = 1_000;
/** How long sending the missed history may wait for a client to read. */
const RESUME_DRAIN_TIMEOUT_MS = 15_000;
/** Entries one user's rate window keeps at most (far more than ten seconds of commits). */
const MAX_WINDOW_ENTRIES = 2_000;

/** Whose clicks a stream shows: the account's, or one link's of it. */
export interface LiveScope {
  userId: string;
  linkId?: string;
}

interface LiveStream {
  /** Its place in the per-user count. */
  id: string;
  scope: LiveScope;
  res: ServerResponse;
  /** Messages announced while the stream sends its missed history; undefined once it is live. */
  held?: { id: string; text: string }[];
  /** The last entry id sent (or resumed from): the history is sent after it, held messages too. */
  lastId?: string;
  closed: boolean;
}

/** What an instance keeps per user with streams open on it. */
interface UserFeed {
  userId: string;
  channel: string;
  streams: Set<LiveStream>;
  /** The user's entries of the last LIVE_RATE_WINDOW_MS (ids and counts only), oldest first. */
  window: Pick<StoredLiveEntry, 'id' | 'links'>[];
  /** Resolves once the subscription is confirmed (rejects if it could not be made). */
  subscribed: Promise<unknown>;
}

const scopeClicks = (entry: Pick<LiveEntry, 'links'>, scope: LiveScope): number => {
  if (scope.linkId !== undefined) return entry.links[scope.linkId] ?? 0;
  let clicks = 0;
  for (const count of Object.values(entry.links)) clicks += count;
  return clicks;
};

/** The scope's clicks per second over the window ending at entry `id`; `window` is oldest first. */
function perSecond(window: readonly Pick<StoredLiveEntry, 'id' | 'links'>[], id: string, scope: LiveScope): number {
  const since = liveEntryTime(id) - LIVE_RATE_WINDOW_MS;
  let clicks = 0;
  for (const entry of window) {
    if (liveEntryTime(entry.id) <= since || compareLiveEntryIds(entry.id, id) > 0) continue;
    clicks += scopeClicks(entry, scope);
  }
  return Math.round((clicks * 1000 * 10) / LIVE_RATE_WINDOW_MS) / 10;
}

/**
 * The SSE message of an entry for a scope, or undefined when the entry holds none of its clicks.
 * Each click is rebuilt field by field, so nothing but these fields can reach a client.
 */
export function liveMessage(entry: StoredLiveEntry, scope: LiveScope, rate: number): string | undefined {
  const clicks = scopeClicks(entry, scope);
  if (clicks === 0) return undefined;
  const recent = [];
  for (const click of entry.recent) {
    if (recent.length === LIVE_RECENT_CLICKS) break;
    if (scope.linkId !== undefined && click.linkId !== scope.linkId) continue;
    const { at, linkId, platform, country, browser, os, referrer } = click;
    recent.push({ at, linkId, platform, country, browser, os, referrer });
  }
  const data = JSON.stringify({ at: entry.at, clicks, perSecond: rate, recent });
  return `id: ${entry.id}\nevent: clicks\ndata: ${data}\n\n`;
}

/** Adds `entry` to a window kept oldest first, once, and drops what fell out of it. */
function remember(window: Pick<StoredLiveEntry, 'id' | 'links'>[], entry: StoredLiveEntry): boolean {
  let at = window.length;
  while (at > 0 && compareLiveEntryIds(window[at - 1]!.id, entry.id) >= 0) {
    if (window[at - 1]!.id === entry.id) return false;
    at--;
  }
  window.splice(at, 0, { id: entry.id, links: entry.links });
  const newest = liveEntryTime(window[window.length - 1]!.id);
  let stale = 0;
  while (stale < window.length && liveEntryTime(window[stale]!.id) <= newest - LIVE_RATE_WINDOW_MS) stale++;
  window.splice(0, Math.max(stale, window.length - MAX_WINDOW_ENTRIES));
  return true;
}

/**
 * The live click streams of one API instance. One Redis subscriber connection (shared with the
 * rest of the API) carries every user's announcements: the instance subscribes to a user's channel
 * while it has a stream of theirs open, and writes each entry to those streams. A stream that
 * resumes (Last-Event-ID) first gets the entries after that id from the user's history, then the
 * live ones. Places are counted per user across instances (liveStreamSlots); a client that does
 * not read is closed once LIVE_SEND_BUFFER_BYTES wait unsent, so no stream holds memory without
 * bound.
 */
export function liveFeed(deps: {
  redis: RedisClient;
  subscriber: RedisClient;
  keys: RedisKeys;
  slots: LiveStreamSlots;
  log: FastifyBaseLogger;
  /** How often each stream gets a `: ping` comment, and its place in the per-user count is renewed. */
  pingIntervalMs: number;
  sendBufferBytes?: number;
}) {
  const { redis, subscriber, keys, slots, log } = deps;
  const sendBufferBytes = deps.sendBufferBytes ?? LIVE_SEND_BUFFER_BYTES;
  const feeds = new Map<string, UserFeed>();
  const byChannel = new Map<string, UserFeed>();

  /** Writes to a stream; closes it instead when its client has left too much unread. */
  const send = (stream: LiveStream, text: string): void => {
    if (stream.closed) return;
    stream.res.write(text);
    if (stream.res.writableLength > sendBufferBytes) {
      log.info({ userId: stream.scope.userId, unsent: stream.res.writableLength }, 'live stream closed: its client does not read');
      stream.res.destroy();
    }
  };

  const deliver = (feed: UserFeed, entry: StoredLiveEntry): void => {
    if (!remember(feed.window, entry)) return;
    for (const stream of feed.streams) {
      const text = liveMessage(entry, stream.scope, perSecond(feed.window, entry.id, stream.scope));
      if (text === undefined) continue;
      if (!stream.held) {
        stream.lastId = entry.id;
        send(stream, text);
      } else if (stream.held.push({ id: entry.id, text }) > MAX_HELD_MESSAGES) {
        stream.res.destroy();
      }
    }
  };

  const onMessage = (channel: string, message: string) => {
    const feed = byChannel.get(channel);
    const entry = feed && parseLiveAnnouncement(message);
    if (feed && entry) deliver(feed, entry);
  };

  /** Entries announced while the subscriber was reconnecting are lost to pub/sub: read them from the history. */
  const catchUp = async () => {
    for (const feed of feeds.values()) {
      const newest = feed.window.at(-1)?.id;
      const start = newest ? `(${newest}` : String(Date.now() - LIVE_RATE_WINDOW_MS);
      try {
        for (const entry of await readLiveEntries(redis, keys, feed.userId, start)) deliver(feed, entry);
      } catch (error) {
        log.warn({ err: error }, 'live streams could not catch up after a Redis reconnect');
      }
    }
  };
  let connectedBefore = subscriber.status === 'ready';
  const onReady = () => {
    if (connectedBefore) void catchUp();
    connectedBefore = true;
  };
  subscriber.on('message', onMessage);
  subscriber.on('ready', onReady);

  const join = (stream: LiveStream): UserFeed => {
    const { userId } = stream.scope;
    let feed = feeds.get(userId);
    if (!feed) {
      const channel = keys.liveAnnouncements(userId);
      const created: UserFeed = { userId, channel, streams: new Set(), window: [], subscribed: subscriber.subscribe(channel) };
      // The rate window starts with the entries of the last seconds, which came before the subscription.
      created.subscribed = created.subscribed.then(async () => {
        try {
          for (const entry of await readLiveEntries(redis, keys, userId, String(Date.now() - LIVE_RATE_WINDOW_MS))) {
            remember(created.window, entry);
          }
        } catch (error) {
          log.warn({ err: error }, 'live stream rate window not read; it fills from now on');
        }
      });
      created.subscribed.catch(() => {});
      feed = created;
      feeds.set(userId, feed);
      byChannel.set(channel, feed);
    }
    feed.streams.add(stream);
    return feed;
  };

  /** Forgets a stream that ended; resolves once its place is freed (or freeing it failed, logged). */
  const leave = async (stream: LiveStream): Promise<void> => {
    if (stream.closed) return;
    stream.closed = true;
    const { userId } = stream.scope;
    const feed = feeds.get(userId);
    if (feed?.streams.delete(stream) && feed.streams.size === 0) {
      feeds.delete(userId);
      byChannel.delete(feed.channel);
      subscriber.unsubscribe(feed.channel).catch((error: unknown) => log.warn({ err: error }, 'live stream unsubscribe failed'));
    }
    await slots
      .release(userId, stream.id)
      .catch((error: unknown) => log.warn({ err: error }, 'live stream place not released; it expires'));
  };

  /** Sends the history after `stream.lastId`, waiting for a client that reads slowly, then what was held meanwhile. */
  const resume = async (stream: LiveStream): Promise<void> => {
    if (stream.lastId !== undefined) {
      const after = stream.lastId;
      // From a window's length before: those entries give the first messages' rates.
      const read = await readLiveEntries(redis, keys, stream.scope.userId, String(Math.max(0, liveEntryTime(after) - LIVE_RATE_WINDOW_MS)));
      const window: Pick<StoredLiveEntry, 'id' | 'links'>[] = [];
      for (const entry of read) {
        remember(window, entry);
        if (compareLiveEntryIds(entry.id, after) <= 0) continue;
        const text = liveMessage(entry, stream.scope, perSecond(window, entry.id, stream.scope));
        if (text === undefined || stream.closed) continue;
        stream.lastId = entry.id;
        if (!stream.res.write(text)) await drained(stream);
      }
    }
    for (const { id, text } of stream.held ?? []) {
      if (stream.lastId !== undefined && compareLiveEntryIds(id, stream.lastId) <= 0) continue;
      stream.lastId = id;
      send(stream, text);
    }
    stream.held = undefined;
  };

  const drained = async (stream: LiveStream): Promise<void> => {
    const signal = AbortSignal.timeout(RESUME_DRAIN_TIMEOUT_MS);
    try {
      await once(stream.res, 'drain', { signal });
    } catch {
      stream.res.destroy();
    }
  };

  const ping = setInterval(() => {
    for (const feed of feeds.values()) {
      const ids: string[] = [];
      for (const stream of feed.streams) {
        send(stream, ': ping\n\n');
        ids.push(stream.id);
      }
      slots.renew(feed.userId, ids).catch((error: unknown) => log.warn({ err: error }, 'live stream places not renewed'));
    }
  }, deps.pingIntervalMs);
  ping.unref();

  return {
    /**
     * Answers the request with the scope's stream (the caller has checked the link is theirs), or
     * throws the 429 when the user has all their places taken, or 503 when Redis cannot be reached.
     */
    async open(scope: LiveScope, reply: FastifyReply, lastEventId?: string): Promise<void> {
      const stream: LiveStream = { id: randomUUID(), scope, res: reply.raw, held: [], lastId: lastEventId, closed: false };
      const place = await slots.acquire(scope.userId, stream.id).catch((error: unknown) => {
        throw unavailable(error);
      });
      if (!place.acquired) {
        throw rateLimited(`At most ${slots.perUser} live streams at once per account; close one first`, place.retryAfterMs / 1000);
      }
      const feed = join(stream);
      try {
        await feed.subscribed;
      } catch (error) {
        await leave(stream);
        throw unavailable(error);
      }
      reply.hijack();
      const res = reply.raw;
      res.on('close', () => void leave(stream));
      // The client may have left while its place was taken.
      if (res.destroyed || !res.socket || res.socket.destroyed) return leave(stream);
      // Open as long as the client reads: no idle timeout on a stream that is quiet between clicks.
      res.socket.setTimeout(0);
      // The headers hooks set (the rate limit's), then the stream's.
      for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) res.setHeader(name, value);
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'keep-alive',
        // Tells nginx-style proxies not to hold the messages back.
        'x-accel-buffering': 'no',
      });
      res.flushHeaders();
      try {
        await resume(stream);
      } catch (error) {
        log.warn({ err: error }, 'live stream history unreadable; the client may reconnect');
        res.end();
      }
    },
    /** Streams open on this instance. */
    get streams(): number {
      let open = 0;
      for (const feed of feeds.values()) open += feed.streams.size;
      return open;
    },
    /** Ends every stream (clients reconnect to another instance) and stops listening. */
    async close(): Promise<void> {
      clearInterval(ping);
      subscriber.off('message', onMessage);
      subscriber.off('ready', onReady);
      const streams = [...feeds.values()].flatMap((feed) => [...feed.streams]);
      await Promise.all(
        streams.map((stream) => {
          stream.res.end();
          return leave(stream);
        }),
      );
    },
  };
}
export type LiveFeed = ReturnType<typeof liveFeed>;

const unavailable = (error: unknown) =>
  Object.assign(new AppError('unavailable', 'Live streams are unavailable right now; try again shortly'), { cause: error });
