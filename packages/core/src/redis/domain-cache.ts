import type { RedisClient } from './client.js';
import type { CachedDomain } from '../db/domains-repository.js';
import type { RedisKeys } from './keys.js';

/** Writes an active domain's record and tells every redirector to drop its copy. */
export async function cacheDomain(redis: RedisClient, keys: RedisKeys, hostname: string, domain: CachedDomain): Promise<void> {
  await redis.multi().set(keys.domain(hostname), JSON.stringify(domain)).publish(keys.domainInvalidations, hostname).exec();
}

/** Removes a domain's record (deleted, or never active) and tells every redirector. */
export async function uncacheDomain(redis: RedisClient, keys: RedisKeys, hostname: string): Promise<void> {
  await redis.multi().del(keys.domain(hostname)).publish(keys.domainInvalidations, hostname).exec();
}
