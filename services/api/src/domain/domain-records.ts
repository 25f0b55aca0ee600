import type { RedisKeys } from '@deeplink/core';
import { appsRepository, type DomainRecord, type DomainsRepository, type Sql, toCachedDomain } from '@deeplink/core/db';
import { cacheDomain, type RedisClient } from '@deeplink/core/redis';
import type { FastifyBaseLogger } from 'fastify';

/**
 * Keeps the redirectors' records of an account's active domains (their not-found URL and the
 * account's apps) in Redis. A failed write is logged; the redirector reads PostgreSQL when Redis
 * has no record, and an entry it holds lives at most LINK_CACHE_TTL_MS.
 */
export function domainRecords(deps: { sql: Sql; domains: DomainsRepository; redis: RedisClient; keys: RedisKeys; log: FastifyBaseLogger }) {
  const apps = appsRepository(deps.sql);
  const write = async (domain: DomainRecord) => {
    try {
      await cacheDomain(deps.redis, deps.keys, domain.hostname, toCachedDomain(domain, await apps.listByUser(domain.userId)));
    } catch (error) {
      deps.log.warn({ err: error, hostname: domain.hostname }, 'domain cache write failed');
    }
  };
  return {
    /** Writes one active domain's record. */
    write,
    /** Writes every active domain of the user (after their apps changed). */
    async writeAll(userId: string): Promise<void> {
      await Promise.all((await deps.domains.activeByUser(userId)).map(write));
    },
  };
}
export type DomainRecords = ReturnType<typeof domainRecords>;
