import type { RedisClient } from './client.js';
import type { LinkRecord, RegisteredIosApp } from '../db/links-repository.js';
import type { AndroidLink, IosLink, SocialPreview } from '../schemas/links.js';
import { linkCacheId } from '../links/cache-id.js';
import { MISSING_LINK, type RedisKeys } from './keys.js';

/** What the redirector needs to route a visit: nothing else of the link is cached. */
export interface CachedLink {
  id: string;
  defaultUrl: string;
  androidLink?: AndroidLink;
  iosLink?: IosLink;
  desktopUrl?: string;
  customParameters?: Record<string, string>;
  /** Expiry as epoch milliseconds. */
  expiresAt?: number;
  /** Where an expired link sends visitors. */
  expiredUrl?: string;
  /** What link-preview crawlers are shown. */
  socialPreview?: SocialPreview;
  /** The link's title, for the iOS page: only on links with an iosLink and no preview title. */
  title?: string;
  /** The owner's registered app of the iosLink's bundle id, when it has a name or an App Store id. */
  iosApp?: RegisteredIosApp;
}

export function toCachedLink(link: LinkRecord): CachedLink {
  const cached: CachedLink = { id: link.id, defaultUrl: link.defaultUrl };
  if (link.androidLink) cached.androidLink = link.androidLink;
  if (link.iosLink) cached.iosLink = link.iosLink;
  if (link.desktopUrl) cached.desktopUrl = link.desktopUrl;
  if (link.customParameters && Object.keys(link.customParameters).length > 0) {
    cached.customParameters = link.customParameters;
  }
  if (link.expiresAt) cached.expiresAt = link.expiresAt.getTime();
  if (link.expiredUrl) cached.expiredUrl = link.expiredUrl;
  if (link.socialPreview) cached.socialPreview = link.socialPreview;
  else if (link.iosLink) cached.title = link.title;
  if (link.iosLink && link.iosApp && (link.iosApp.name || link.iosApp.appStoreId)) cached.iosApp = link.iosApp;
  return cached;
}

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
