import type { RedisClient } from './client.js';
import { type CachedLink, type LinkRecord, toCachedLink } from '../links/link-fields.js';
import { linkCacheId } from '../links/cache-id.js';
import { MISSING_LINK, type RedisKeys } from './keys.js';

// The record's fields and their order are defined with the link's other fields (LINK_FIELDS).
export { type CachedLink, toCachedLink };

/** Parses a link key's value: a CachedLink, null for the negative-cache marker, undefined for absent. */
export function parseCachedLink(value: string): CachedLink | null;
export function parseCachedLink(value: string | null): CachedLink | null | undefined;
export function parseCachedLink(value: string | null): CachedLink | null | undefined {
  if (value === null) return undefined;
  if (value === MISSING_LINK) return null;
  return JSON.parse(value) as CachedLink;
}

/** Writes a link's routing record and tells every redirector to drop its in-process copy. */
export async function cacheLink(redis: RedisClient, keys: RedisKeys, link: LinkRecord): Promise<void> {
  await redis
    .multi()
    .set(keys.link(linkCacheId(link.code, link.domain)), JSON.stringify(toCachedLink(link)))
    .publish(keys.linkInvalidations, linkCacheId(link.code, link.domain))
    .exec();
}

/** Removes a link's routing record (deleted link), by cache id, and tells every redirector. */
export async function uncacheLink(redis: RedisClient, keys: RedisKeys, id: string): Promise<void> {
  await redis.multi().del(keys.link(id)).publish(keys.linkInvalidations, id).exec();
}
