import { type Config, MISSING_LINK, parseLinkCacheId, type RedisKeys, shortUrls } from '@deeplink/core';
import type { Sql } from '@deeplink/core/db';
import { parseCachedLink, type RedisClient } from '@deeplink/core/redis';
import { type Logger, rateLimitedLog } from '@deeplink/core/runtime';
import { buildAnswers, noAnswers } from './link-answers.js';
import { createLinkCache, type LinkEntry, UNKNOWN_CODE } from './link-cache.js';
import { createLinkRecords, type RecordRead } from './link-records.js';
import type { Metrics } from './metrics.js';

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

/** A load in progress, shared by every request for its code meanwhile. */
interface Load extends RecordRead {
  promise: Promise<LinkEntry>;
}

/** In-process cache → Redis → PostgreSQL, with negative caching and pub/sub invalidation. */
export type LinkLookup = ReturnType<typeof createLinkLookup>;

/**
 * Builds the lookup and subscribes to invalidations. An entry past LINK_CACHE_TTL_MS keeps answering
 * while one background load refreshes it (stale-while-revalidate), so a cached link never waits on
 * Redis; a refresh that finds the same record keeps the entry, and with it the answers built for it.
 */
export function createLinkLookup({ config, keys, redis, subscriber, sql, metrics, logger }: LinkLookupDeps) {
  const cache = createLinkCache(config);
  const records = createLinkRecords({ config, keys, redis, sql, metrics, logger });
  const loads = new Map<string, Load>();
  const warnRefresh = rateLimitedLog(logger, 'warn');
  const entryOf = linkEntries(config);

  /** A changed link: forgotten, and a load in progress must not cache what it read. */
  function invalidate(id: string) {
    cache.delete(id);
    const load = loads.get(id);
    if (load) {
      load.invalidated = true;
      loads.delete(id);
    }
  }
  const unsubscribe = subscribeToInvalidations(subscriber, keys.linkInvalidations, {
    invalidate,
    forgetAll: () => cache.clear(),
    logger,
  });

  /** Redis, then PostgreSQL, into the cache; concurrent loads of one code share a single read. */
  function load(id: string): Promise<LinkEntry> {
    const existing = loads.get(id);
    if (existing) return existing.promise;
    const load: Load = { promise: undefined as never, invalidated: false };
    load.promise = records
      .read(id, load)
      .then((text) => remember(id, text, load))
      .finally(() => {
        if (loads.get(id) === load) loads.delete(id);
      });
    loads.set(id, load);
    return load.promise;
  }

  /** The entry for a record just read, kept in the cache unless the link changed while it was read. */
  function remember(id: string, text: string, load: Load): LinkEntry {
    if (text === MISSING_LINK) {
      cache.setUnknown(id, load.invalidated ? undefined : Date.now() + config.NEGATIVE_CACHE_TTL_SECONDS * 1000);
      return UNKNOWN_CODE;
    }
    // Answered, but not cached: the link changed while it was being read.
    if (load.invalidated) return entryOf(id, text);
    const previous = cache.link(id);
    if (previous?.text !== text) {
      const entry = entryOf(id, text);
      cache.set(id, entry);
      return entry;
    }
    // The same record: the entry stays, with the answers built for it.
    previous.freshUntil = freshUntil(config);
    cache.set(id, previous);
    return previous;
  }

  /** Loads an entry past its time again, in the background; until then it keeps answering. */
  function refresh(id: string, entry: LinkEntry, now: number): void {
    if (loads.has(id)) return;
    entry.freshUntil = now + REFRESH_RETRY_MS; // one refresh at a time, and a pause if it fails
    load(id).catch((error: unknown) => {
      metrics.refreshErrors++;
      warnRefresh({ err: error }, 'link refresh failed; serving the cached record');
    });
  }

  return {
    /**
     * Synchronous cache read: the code's entry, or undefined when not cached. An entry past its time
     * is still returned, and refreshed in the background.
     */
    peek(id: string, now: number): LinkEntry | undefined {
      const entry = cache.get(id, now);
      if (entry === undefined) {
        metrics.misses.lru++;
        return undefined;
      }
      metrics.hits.lru++;
      if (now >= entry.freshUntil) refresh(id, entry, now);
      return entry;
    },

    /** Redis, then PostgreSQL, for a code the cache does not hold. */
    load,

    /** Entries in the cache, for the metrics gauge. */
    size: cache.size,

    /** Bytes the cache holds (records and prepared answers), for the metrics gauge. */
    bytes: cache.bytes,

    /** Stops listening for invalidations (the caller closes the connections). */
    close: unsubscribe,
  };
}

/**
 * A new entry's time: somewhere in the second half of LINK_CACHE_TTL_MS, so links loaded together
 * (a deploy, a campaign going live) are refreshed spread out rather than in one burst.
 */
const freshUntil = (config: Pick<Config, 'LINK_CACHE_TTL_MS'>) => Date.now() + config.LINK_CACHE_TTL_MS * (0.5 + Math.random() / 2);

/** Builds the cache entry of a record's text: the parsed record and all its answers. */
function linkEntries(config: Pick<Config, 'BRAND_NAME' | 'SHORT_URL_BASE' | 'LINK_CACHE_TTL_MS'>) {
  const shortUrl = shortUrls(config.SHORT_URL_BASE);
  /** The short URL of the link a cache id names, on its own domain (a preview page names it). */
  const shortUrlOf = (id: string) => {
    const { code, hostname } = parseLinkCacheId(id);
    return shortUrl(code, hostname);
  };
  return (id: string, text: string): LinkEntry => {
    const link = parseCachedLink(text);
    return {
      link,
      answers: link ? buildAnswers(link, shortUrlOf(id), config.BRAND_NAME) : noAnswers(),
      text,
      freshUntil: freshUntil(config),
    };
  };
}

/**
 * Calls `invalidate` with every id published on `channel`, and `forgetAll` when the subscriber
 * comes back after a disconnect: messages published meanwhile are lost. Returns the unsubscribe.
 */
function subscribeToInvalidations(
  subscriber: RedisClient,
  channel: string,
  { invalidate, forgetAll, logger }: { invalidate: (id: string) => void; forgetAll: () => void; logger: Logger },
): () => void {
  const onMessage = (from: string, id: string) => {
    if (from === channel) invalidate(id);
  };
  let subscribedBefore = subscriber.status === 'ready';
  const onReady = () => {
    if (subscribedBefore) forgetAll();
    subscribedBefore = true;
  };
  subscriber.on('message', onMessage);
  subscriber.on('ready', onReady);
  // Queued while Redis is away; ioredis subscribes again after every reconnect.
  subscriber.subscribe(channel).catch((error: unknown) => {
    logger.error({ err: error }, 'link invalidation subscribe failed');
  });
  return () => {
    subscriber.off('message', onMessage);
    subscriber.off('ready', onReady);
  };
}
