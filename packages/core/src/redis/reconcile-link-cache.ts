import { isDeepStrictEqual } from 'node:util';
import type { Sql } from '../db/client.js';
import { linksRepository } from '../db/links-repository.js';
import type { RedisClient } from './client.js';
import { linkCacheId } from '../links/cache-id.js';
import { MISSING_LINK, type RedisKeys } from './keys.js';
import { cacheLink, parseCachedLink, toCachedLink, uncacheLink } from './link-cache.js';
import { getMany, scanKeys } from './multi-key.js';

export interface ReconcileResult {
  /** Links read from PostgreSQL. */
  links: number;
  /** Live links written to Redis because their key was missing, a negative marker, or stale. */
  restored: number;
  /** Expired links whose routing record was removed from Redis. */
  evicted: number;
  /** Routing records in Redis whose link no longer exists, removed. */
  removed: number;
}

const PAGE_SIZE = 500;

/**
 * Makes the Redis link cache agree with PostgreSQL: restores live links that are missing or stale,
 * evicts expired links, and removes records of deleted links, publishing an invalidation for each
 * change. Safe to run from several processes at once; run it at start-up and on a schedule.
 */
export async function reconcileLinkCache(sql: Sql, redis: RedisClient, keys: RedisKeys, now: Date = new Date()): Promise<ReconcileResult> {
  const links = linksRepository(sql);
  const result: ReconcileResult = { links: 0, restored: 0, evicted: 0, removed: 0 };
  const existing = new Set<string>();

  for await (const page of links.allInBatches(PAGE_SIZE)) {
    const cached = await getMany(
      redis,
      page.map((link) => keys.link(linkCacheId(link.code, link.domain))),
    );
    await Promise.all(
      page.map(async (link, index) => {
        const id = linkCacheId(link.code, link.domain);
        existing.add(id);
        const value = cached[index] ?? null;
        if (link.expiresAt && link.expiresAt.getTime() <= now.getTime()) {
          // A negative marker is left alone: it answers the same way and expires by itself.
          if (value !== null && value !== MISSING_LINK) {
            await uncacheLink(redis, keys, id);
            result.evicted++;
          }
        } else if (!isDeepStrictEqual(parseCachedLink(value), toCachedLink(link))) {
          await cacheLink(redis, keys, link);
          result.restored++;
        }
      }),
    );
    result.links += page.length;
  }

  // Records whose cache id was not among the links read above. A link created since then is
  // looked up again before anything is removed, so only records of deleted links go.
  const codeStart = keys.link('').length;
  for await (const found of scanKeys(redis, keys.linkPattern)) {
    const unknown = found.map((key) => key.slice(codeStart)).filter((code) => !existing.has(code));
    if (unknown.length === 0) continue;
    const values = await getMany(
      redis,
      unknown.map((code) => keys.link(code)),
    );
    for (const [index, code] of unknown.entries()) {
      const value = values[index] ?? null;
      if (value === null || value === MISSING_LINK) continue;
      if (await links.findByCacheId(code)) continue;
      await uncacheLink(redis, keys, code);
      result.removed++;
    }
  }

  return result;
}
