import { type Config, MISSING_LINK, type RedisKeys } from '@deeplink/core';
import { type LinkRecord, linksRepository, type Sql } from '@deeplink/core/db';
import { type RedisClient, toCachedLink } from '@deeplink/core/redis';
import { type Logger, rateLimitedLog, withTimeout } from '@deeplink/core/runtime';
import type { Metrics } from './metrics.js';

/**
 * Records this process copies from PostgreSQL into Redis expire after a day, which bounds the
 * damage of a rare race with a concurrent delete. The API's own writes never expire.
 */
const REFILL_TTL_SECONDS = 24 * 60 * 60;
/** A PostgreSQL lookup slower than this fails the request (503) instead of holding it. */
const DB_TIMEOUT_MS = 3_000;

export interface LinkRecordsDeps {
  config: Pick<Config, 'NEGATIVE_CACHE_TTL_SECONDS'>;
  keys: RedisKeys;
  /** Commands; should fail fast (no offline queue) so a dead Redis falls through to PostgreSQL. */
  redis: RedisClient;
  sql: Sql;
  metrics: Metrics;
  logger: Logger;
}

/** A read in progress: set when an invalidation arrives meanwhile, so what it read is not copied anywhere. */
export interface RecordRead {
  invalidated: boolean;
}

/**
 * Link records beyond the process: Redis, then PostgreSQL on a Redis miss or failure, copying what
 * PostgreSQL found (or the marker of an unknown code) back into Redis.
 */
export function createLinkRecords({ config, keys, redis, sql, metrics, logger }: LinkRecordsDeps) {
  const links = linksRepository(sql);
  const warnRedis = rateLimitedLog(logger, 'warn');

  /** The record's text in Redis; null when Redis has none, undefined when Redis failed. */
  async function fromRedis(id: string): Promise<string | null | undefined> {
    try {
      return await redis.get(keys.link(id));
    } catch (error) {
      metrics.lookupErrors.redis++;
      warnRedis({ err: error }, 'redis link lookup failed, using PostgreSQL');
      return undefined;
    }
  }

  /** The record's text as Redis would hold it, from PostgreSQL; copies it into Redis. */
  async function fromDatabase(id: string, read: RecordRead): Promise<string> {
    let record: LinkRecord | undefined;
    try {
      record = await withTimeout(links.findByCacheId(id), DB_TIMEOUT_MS, 'database lookup');
    } catch (error) {
      metrics.lookupErrors.db++;
      throw error;
    }
    (record ? metrics.hits : metrics.misses).db++;
    const text = record ? JSON.stringify(toCachedLink(record)) : MISSING_LINK;
    if (!read.invalidated) {
      // NX: never overwrite what the API wrote in the meantime. Best effort; the answer does not wait.
      const ttl = record ? REFILL_TTL_SECONDS : config.NEGATIVE_CACHE_TTL_SECONDS;
      redis.set(keys.link(id), text, 'EX', ttl, 'NX').catch((error: unknown) => warnRedis({ err: error }, 'redis link cache fill failed'));
    }
    return text;
  }

  return {
    /** The record's text as Redis holds it (MISSING_LINK for an unknown code); rejects when PostgreSQL fails. */
    async read(id: string, read: RecordRead): Promise<string> {
      const cached = await fromRedis(id);
      if (cached !== undefined && cached !== null) {
        metrics.hits.redis++;
        return cached;
      }
      metrics.misses.redis++;
      return fromDatabase(id, read);
    },
  };
}
