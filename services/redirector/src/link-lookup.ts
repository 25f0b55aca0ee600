import { BoundedMap, type Config, MISSING_LINK, parseLinkCacheId, type RedisKeys, shortUrls } from '@deeplink/core';
import { type LinkRecord, linksRepository, type Sql } from '@deeplink/core/db';
import { type CachedLink, parseCachedLink, type RedisClient, toCachedLink } from '@deeplink/core/redis';
import { type Logger, rateLimitedLog, withTimeout } from '@deeplink/core/runtime';
import { answersBytes, buildAnswers, noAnswers, type LinkAnswers } from './link-answers.js';
import type { Metrics } from './metrics.js';

/**
 * Records this process copies from PostgreSQL into Redis expire after a day, which bounds the
 * damage of a rare race with a concurrent delete. The API's own writes never expire.
 */
const REFILL_TTL_SECONDS = 24 * 60 * 60;
/** A PostgreSQL lookup slower than this fails the request (503) instead of holding it. */
const DB_TIMEOUT_MS = 3_000;
/** How long a failed background refresh waits before the next visit may try again. */
const REFRESH_RETRY_MS = 1_000;

export interface LinkLookupDeps {
  config: Pick<
    Config,
    | 'BRAND_NAME'
    | 'SHORT_URL_BASE'
    | 'LINK_CACHE_MAX'
    | 'LINK_CACHE_MAX_BYTES'
    | 'LINK_CACHE_TTL_MS'
    | 'NEGATIVE_CACHE_TTL_SECONDS'
    | 'NEGATIVE_CACHE_MAX'
  >;
  keys: RedisKeys;
  /** Commands; should fail fast (no offline queue) so a dead Redis falls through to PostgreSQL. */
  redis: RedisClient;
  /** A connection of its own for SUBSCRIBE. */
  subscriber: RedisClient;
  sql: Sql;
  metrics: Metrics;
  logger: Logger;
}

/** What the in-process cache holds for a code. */
export interface LinkEntry {
  /** The routing record; null for a code known not to exist. */
  link: CachedLink | null;
  /** The record's answers, built on first use (link-answers.ts); they live and go with the entry. */
  answers: LinkAnswers;
  /** The record as Redis holds it, to tell a changed record from the same one read again. */
  text: string;
  /** Until then the entry is used without asking Redis; afterwards it is still used, and refreshed. */
  freshUntil: number;
}

interface Pending {
  promise: Promise<LinkEntry>;
  /** Set when an invalidation arrives during the load: its result must not be cached. */
  invalidated: boolean;
}

/** The entry of every unknown code: no record, nothing to answer but the 404. */
const UNKNOWN_CODE: LinkEntry = { link: null, answers: noAnswers(), text: MISSING_LINK, freshUntil: Infinity };

/** What an entry costs, roughly: the record's text (two bytes a character) and its prepared answers. */
const entryBytes = (entry: LinkEntry): number => 2 * entry.text.length + answersBytes(entry.answers) + 200;

/** In-process LRU → Redis → PostgreSQL, with negative caching and pub/sub invalidation. */
export type LinkLookup = ReturnType<typeof createLinkLookup>;

/**
 * Builds the lookup and subscribes to invalidations. An entry past LINK_CACHE_TTL_MS keeps answering
 * while one background load refreshes it (stale-while-revalidate), so a cached link never waits on
 * Redis; a refresh that finds the same record keeps the entry, and with it the answers built for it.
 */
export function createLinkLookup({ config, keys, redis, subscriber, sql, metrics, logger }: LinkLookupDeps) {
  const lru = new BoundedMap<string, LinkEntry>(config.LINK_CACHE_MAX, config.LINK_CACHE_MAX_BYTES, entryBytes);
  /**
   * Unknown codes, until when they are known to be unknown: a cache of their own, so a scan of
   * random codes cannot push real links out of the LRU.
   */
  const unknown = new BoundedMap<string, number>(config.NEGATIVE_CACHE_MAX);
  const pending = new Map<string, Pending>();
  const links = linksRepository(sql);
  const warnRedis = rateLimitedLog(logger, 'warn');
  const warnRefresh = rateLimitedLog(logger, 'warn');
  const shortUrl = shortUrls(config.SHORT_URL_BASE);
  /** The short URL of the link a cache id names, on its own domain. */
  const shortUrlOf = (id: string) => {
    const { code, hostname } = parseLinkCacheId(id);
    return shortUrl(code, hostname);
  };

  /**
   * A new entry's time: somewhere in the second half of LINK_CACHE_TTL_MS, so links loaded together
   * (a deploy, a campaign going live) are refreshed spread out rather than in one burst.
   */
  const freshUntil = () => Date.now() + config.LINK_CACHE_TTL_MS * (0.5 + Math.random() / 2);

  const invalidate = (code: string) => {
    lru.delete(code);
    unknown.delete(code);
    const load = pending.get(code);
    if (load) {
      load.invalidated = true;
      pending.delete(code);
    }
  };
  const onMessage = (channel: string, code: string) => {
    if (channel === keys.linkInvalidations) invalidate(code);
  };
  // Messages published while the subscriber was disconnected are lost: forget everything once.
  let subscribedBefore = false;
  const onReady = () => {
    if (subscribedBefore) {
      lru.clear();
      unknown.clear();
    }
    subscribedBefore = true;
  };
  subscriber.on('message', onMessage);
  subscriber.on('ready', onReady);
  if (subscriber.status === 'ready') subscribedBefore = true;
  // Queued while Redis is away; ioredis subscribes again after every reconnect.
  subscriber.subscribe(keys.linkInvalidations).catch((error: unknown) => {
    logger.error({ err: error }, 'link invalidation subscribe failed');
  });

  /** The record's text in Redis; null when Redis has none, undefined when Redis failed. */
  async function fromRedis(code: string): Promise<string | null | undefined> {
    try {
      return await redis.get(keys.link(code));
    } catch (error) {
      metrics.lookupErrors.redis++;
      warnRedis({ err: error }, 'redis link lookup failed, using PostgreSQL');
      return undefined;
    }
  }

  /** The record's text as Redis would hold it, from PostgreSQL; copies it into Redis. */
  async function fromDatabase(code: string, load: Pending): Promise<string> {
    let record: LinkRecord | undefined;
    try {
      record = await withTimeout(links.findByCacheId(code), DB_TIMEOUT_MS, 'database lookup');
    } catch (error) {
      metrics.lookupErrors.db++;
      throw error;
    }
    (record ? metrics.hits : metrics.misses).db++;
    const text = record ? JSON.stringify(toCachedLink(record)) : MISSING_LINK;
    if (!load.invalidated) {
      // NX: never overwrite what the API wrote in the meantime. Best effort; the answer does not wait.
      const ttl = record ? REFILL_TTL_SECONDS : config.NEGATIVE_CACHE_TTL_SECONDS;
      redis
        .set(keys.link(code), text, 'EX', ttl, 'NX')
        .catch((error: unknown) => warnRedis({ err: error }, 'redis link cache fill failed'));
    }
    return text;
  }

  async function fetchText(code: string, load: Pending): Promise<string> {
    const cached = await fromRedis(code);
    if (cached !== undefined && cached !== null) {
      metrics.hits.redis++;
      return cached;
    }
    metrics.misses.redis++;
    return fromDatabase(code, load);
  }

  /** Redis, then PostgreSQL, into the LRU; concurrent loads of one code share a single query. */
  function load(code: string): Promise<LinkEntry> {
    const existing = pending.get(code);
    if (existing) return existing.promise;
    const load: Pending = { promise: undefined as never, invalidated: false };
    load.promise = fetchText(code, load)
      .then((text) => {
        if (text === MISSING_LINK) {
          lru.delete(code);
          if (!load.invalidated) unknown.set(code, Date.now() + config.NEGATIVE_CACHE_TTL_SECONDS * 1000);
          return UNKNOWN_CODE;
        }
        const fresh = (): LinkEntry => {
          const link = parseCachedLink(text);
          return {
            link,
            answers: link ? buildAnswers(link, shortUrlOf(code), config.BRAND_NAME) : noAnswers(),
            text,
            freshUntil: freshUntil(),
          };
        };
        // Answered, but not cached: the link changed while it was being read.
        if (load.invalidated) return fresh();
        const previous = lru.get(code);
        if (previous?.text !== text) {
          const entry = fresh();
          lru.set(code, entry);
          return entry;
        }
        previous.freshUntil = freshUntil();
        lru.set(code, previous); // set again: that renews its place in the LRU (see BoundedMap)
        return previous;
      })
      .finally(() => {
        if (pending.get(code) === load) pending.delete(code);
      });
    pending.set(code, load);
    return load.promise;
  }

  /** Loads an entry past its time again, in the background; until then it keeps answering. */
  function refresh(code: string, entry: LinkEntry, now: number): void {
    if (pending.has(code)) return;
    entry.freshUntil = now + REFRESH_RETRY_MS; // one refresh at a time, and a pause if it fails
    load(code).catch((error: unknown) => {
      metrics.refreshErrors++;
      warnRefresh({ err: error }, 'link refresh failed; serving the cached record');
    });
  }

  return {
    /**
     * Synchronous LRU read: the code's entry, or undefined when not cached. An entry past its time
     * is still returned, and refreshed in the background.
     */
    peek(code: string, now: number): LinkEntry | undefined {
      const entry = lru.get(code);
      if (entry === undefined) {
        const until = unknown.get(code);
        if (until !== undefined && now < until) {
          metrics.hits.lru++;
          return UNKNOWN_CODE;
        }
        metrics.misses.lru++;
        return undefined;
      }
      metrics.hits.lru++;
      if (now >= entry.freshUntil) refresh(code, entry, now);
      return entry;
    },

    /** Redis, then PostgreSQL, for a code the LRU does not hold. */
    load,

    /** Entries in the LRU, for the metrics gauge. */
    size: () => lru.size,

    /** Bytes the LRU holds (records and prepared answers), for the metrics gauge. */
    bytes: () => lru.weight,

    /** Stops listening for invalidations (the caller closes the connections). */
    close(): void {
      subscriber.off('message', onMessage);
      subscriber.off('ready', onReady);
    },
  };
}
