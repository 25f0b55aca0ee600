import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { Config } from '@deeplink/core/config';
import type { Sql } from '@deeplink/core/db/client';
import { linksRepository } from '@deeplink/core/db/links-repository';
import { MISSING_LINK, type RedisKeys } from '@deeplink/core/redis/keys';
import { parseCachedLink, toCachedLink, type CachedLink } from '@deeplink/core/redis/link-cache';
import { rateLimitedLog, type Logger } from './logger.js';
import type { Metrics } from './metrics.js';

/**
 * Records this process copies from PostgreSQL into Redis expire after a day, which bounds the
 * damage of a rare race with a concurrent delete. The API's own writes never expire.
 */
const REFILL_TTL_SECONDS = 24 * 60 * 60;
/** A PostgreSQL lookup slower than this fails the request (503) instead of holding it. */
const DB_TIMEOUT_MS = 3_000;

export interface LinkLookupDeps {
  config: Pick<Config, 'LINK_CACHE_MAX' | 'LINK_CACHE_TTL_MS' | 'NEGATIVE_CACHE_TTL_SECONDS'>;
  keys: RedisKeys;
  /** Commands; should fail fast (no offline queue) so a dead Redis falls through to PostgreSQL. */
  redis: Redis;
  /** A connection of its own for SUBSCRIBE. */
  subscriber: Redis;
  sql: Sql;
  metrics: Metrics;
  logger: Logger;
}

interface Pending {
  promise: Promise<CachedLink | null>;
  /** Set when an invalidation arrives during the load: its result must not be cached. */
  invalidated: boolean;
}

/** In-process LRU → Redis → PostgreSQL, with negative caching and pub/sub invalidation. */
export type LinkLookup = ReturnType<typeof createLinkLookup>;

/** Builds the lookup and subscribes to invalidations. `false` in the LRU marks an unknown code. */
export function createLinkLookup({ config, keys, redis, subscriber, sql, metrics, logger }: LinkLookupDeps) {
  const lru = new LRUCache<string, CachedLink | false>({
    max: config.LINK_CACHE_MAX,
    ttl: config.LINK_CACHE_TTL_MS,
    // Expired entries stay until evicted, to be served if Redis and PostgreSQL both fail.
    noDeleteOnStaleGet: true,
  });
  const pending = new Map<string, Pending>();
  const links = linksRepository(sql);
  const warnRedis = rateLimitedLog(logger.warn);

  const invalidate = (code: string) => {
    lru.delete(code);
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
    if (subscribedBefore) lru.clear();
    subscribedBefore = true;
  };
  subscriber.on('message', onMessage);
  subscriber.on('ready', onReady);
  if (subscriber.status === 'ready') subscribedBefore = true;
  // Queued while Redis is away; ioredis subscribes again after every reconnect.
  subscriber.subscribe(keys.linkInvalidations).catch((error: unknown) => {
    logger.error('link invalidation subscribe failed', { error });
  });

  async function fromRedis(code: string): Promise<CachedLink | null | undefined> {
    try {
      return parseCachedLink(await redis.get(keys.link(code)));
    } catch (error) {
      metrics.lookupErrors.redis++;
      warnRedis('redis link lookup failed, using PostgreSQL', { error });
      return undefined;
    }
  }

  async function fromDatabase(code: string, load: Pending): Promise<CachedLink | null> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('database lookup timed out')), DB_TIMEOUT_MS);
    });
    let record;
    try {
      record = await Promise.race([links.findByCode(code), timeout]);
    } catch (error) {
      metrics.lookupErrors.db++;
      throw error;
    } finally {
      clearTimeout(timer);
    }
    const link = record ? toCachedLink(record) : null;
    (link ? metrics.hits : metrics.misses).db++;
    if (!load.invalidated) {
      // NX: never overwrite what the API wrote in the meantime. Best effort; the answer does not wait.
      const key = keys.link(code);
      const fill = link
        ? redis.set(key, JSON.stringify(link), 'EX', REFILL_TTL_SECONDS, 'NX')
        : redis.set(key, MISSING_LINK, 'EX', config.NEGATIVE_CACHE_TTL_SECONDS, 'NX');
      fill.catch((error: unknown) => warnRedis('redis link cache fill failed', { error }));
    }
    return link;
  }

  async function fetchLink(code: string, load: Pending): Promise<CachedLink | null> {
    const cached = await fromRedis(code);
    if (cached !== undefined) {
      metrics.hits.redis++;
      return cached;
    }
    metrics.misses.redis++;
    return fromDatabase(code, load);
  }

  return {
    /** Synchronous LRU read: the link, null for a known-unknown code, undefined when not cached. */
    peek(code: string): CachedLink | null | undefined {
      const entry = lru.get(code);
      if (entry === undefined) {
        metrics.misses.lru++;
        return undefined;
      }
      metrics.hits.lru++;
      return entry === false ? null : entry;
    },

    /** Redis, then PostgreSQL; concurrent loads of one code share a single query. */
    load(code: string): Promise<CachedLink | null> {
      const existing = pending.get(code);
      if (existing) return existing.promise;
      const load: Pending = { promise: undefined as never, invalidated: false };
      load.promise = fetchLink(code, load)
        .then(
          (link) => {
            if (!load.invalidated) lru.set(code, link ?? false);
            return link;
          },
          (error: unknown) => {
            const stale = lru.get(code, { allowStale: true });
            if (stale === undefined) throw error;
            metrics.staleServed++;
            return stale === false ? null : stale;
          },
        )
        .finally(() => {
          if (pending.get(code) === load) pending.delete(code);
        });
      pending.set(code, load);
      return load.promise;
    },

    /** Entries in the LRU, for the metrics gauge. */
    size: () => lru.size,

    /** Stops listening for invalidations (the caller closes the connections). */
    close(): void {
      subscriber.off('message', onMessage);
      subscriber.off('ready', onReady);
    },
  };
}
