import type { Sql } from '../db/client.js';
import { appsRepository, type AppRecord } from '../db/apps-repository.js';
import { domainsRepository, toCachedDomain } from '../db/domains-repository.js';
import type { RedisClient } from './client.js';
import { cacheDomain, uncacheDomain } from './domain-cache.js';
import { MISSING_LINK, type RedisKeys } from './keys.js';
import { getMany, scanKeys } from './multi-key.js';

export interface DomainReconcileResult {
  /** Active domains read from PostgreSQL. */
  domains: number;
  /** Records written because they were missing or differed (a lost write of the API). */
  restored: number;
  /** Records of hostnames no longer active, removed. */
  removed: number;
}

/**
 * Makes the redirectors' domain records in Redis agree with PostgreSQL (see domain-cache.ts),
 * publishing an invalidation for each change; negative markers are left to expire.
 */
export async function reconcileDomainCache(sql: Sql, redis: RedisClient, keys: RedisKeys): Promise<DomainReconcileResult> {
  const active = await domainsRepository(sql).allActive();
  const apps = appsRepository(sql);
  const appsOf = new Map<string, AppRecord[]>();
  const result: DomainReconcileResult = { domains: active.length, restored: 0, removed: 0 };
  const cached = await getMany(
    redis,
    active.map((domain) => keys.domain(domain.hostname)),
  );
  for (const [index, domain] of active.entries()) {
    let owned = appsOf.get(domain.userId);
    if (!owned) appsOf.set(domain.userId, (owned = await apps.listByUser(domain.userId)));
    const record = toCachedDomain(domain, owned);
    if (cached[index] === JSON.stringify(record)) continue;
    await cacheDomain(redis, keys, domain.hostname, record);
    result.restored++;
  }
  const hostnames = new Set(active.map((domain) => domain.hostname));
  const start = keys.domain('').length;
  for await (const found of scanKeys(redis, keys.domainPattern)) {
    const stale = found.map((key) => key.slice(start)).filter((hostname) => !hostnames.has(hostname));
    if (stale.length === 0) continue;
    const values = await getMany(
      redis,
      stale.map((hostname) => keys.domain(hostname)),
    );
    for (const [index, hostname] of stale.entries()) {
      if (values[index] === null || values[index] === MISSING_LINK) continue;
      await uncacheDomain(redis, keys, hostname);
      result.removed++;
    }
  }
  return result;
}
