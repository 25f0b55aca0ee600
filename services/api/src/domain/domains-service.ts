import { randomBytes } from 'node:crypto';
import {
  challengeName,
  conflict,
  type Domain,
  forbidden,
  invalidRequest,
  notFound,
  type RedisKeys,
  type UpdateDomainBody,
} from '@deeplink/core';
import {
  DomainInUseError,
  type DomainRecord,
  type DomainsRepository,
  DomainTakenError,
  HostnameActiveElsewhereError,
} from '@deeplink/core/db';
import { type RedisClient, uncacheDomain } from '@deeplink/core/redis';
import type { FastifyBaseLogger } from 'fastify';
import type { Principal } from './auth-service.js';
import type { DomainChecks, TxtLookup } from '@deeplink/core/domains';
import type { DomainRecords } from './domain-records.js';

/** Custom short-link domains: add (pending), verify by DNS TXT record (active), change, remove. */
export function domainsService(deps: {
  domains: DomainsRepository;
  records: DomainRecords;
  redis: RedisClient;
  keys: RedisKeys;
  lookupTxt: TxtLookup;
  checks: DomainChecks;
  /** SHORT_URL_BASE: its hostname is the default domain, which nobody may claim. */
  shortUrlBase: string;
  log: FastifyBaseLogger;
}) {
  const defaultHostname = new URL(deps.shortUrlBase).hostname.toLowerCase();

  const toDomain = (domain: DomainRecord): Domain => ({
    id: domain.id,
    hostname: domain.hostname,
    status: domain.verifiedAt ? 'active' : 'pending',
    verification: { type: 'TXT', name: challengeName(domain.hostname), value: domain.verificationToken },
    ...(domain.notFoundUrl && { notFoundUrl: domain.notFoundUrl }),
    allowedUrlPatterns: domain.allowedUrlPatterns,
    ...(domain.verifiedAt && { verifiedAt: domain.verifiedAt.toISOString() }),
    createdAt: domain.createdAt.toISOString(),
    ...(domain.lastCheckedAt && { lastCheckedAt: domain.lastCheckedAt.toISOString() }),
    ...(domain.verificationLostAt && { verificationLostAt: domain.verificationLostAt.toISOString() }),
  });

  const owned = async (principal: Principal, id: string): Promise<DomainRecord> => {
    const domain = await deps.domains.findById(id);
    if (!domain) throw notFound('Domain not found');
    if (domain.userId !== principal.userId) throw forbidden('This domain belongs to another account');
    return domain;
  };

  const activeElsewhere = () =>
    conflict('Another account uses this domain', [{ field: 'hostname', message: 'is active on another account' }]);

  /**
   * Activates the domain, or undefined when it is gone. Another account's active claim gives way
   * only when `found` (the hostname's record, looked up just now) shows its token missing for the
   * grace period; 409 otherwise.
   */
  const activate = async (domain: DomainRecord, found: string[]): Promise<DomainRecord | undefined> => {
    const attempt = () =>
      deps.domains.activate(domain.id).catch((error: unknown) => {
        if (error instanceof HostnameActiveElsewhereError) return 'taken' as const;
        throw error;
      });
    const first = await attempt();
    if (first !== 'taken') return first;
    const holder = await deps.domains.findActiveByHostname(domain.hostname);
    if (holder && (await deps.checks.apply(holder, found)).verifiedAt) throw activeElsewhere();
    const second = await attempt();
    if (second === 'taken') throw activeElsewhere();
    return second;
  };

  return {
    async create(principal: Principal, body: { hostname: string; notFoundUrl?: string; allowedUrlPatterns?: string[] }): Promise<Domain> {
      if (body.hostname === defaultHostname) {
        throw invalidRequest("This is the service's own domain", [{ field: 'hostname', message: 'is the default short-link domain' }]);
      }
      try {
        // 128 random bits: the TXT value proves control of the zone, so it must not be guessable.
        const token = `deeplink-verification=${randomBytes(16).toString('hex')}`;
        return toDomain(await deps.domains.create(principal.userId, body.hostname, token, body));
      } catch (error) {
        if (!(error instanceof DomainTakenError)) throw error;
        throw conflict('You added this domain already', [{ field: 'hostname', message: 'is already one of your domains' }]);
      }
    },

    async list(principal: Principal): Promise<Domain[]> {
      return (await deps.domains.listByUser(principal.userId)).map(toDomain);
    },

    async get(principal: Principal, id: string): Promise<Domain> {
      return toDomain(await owned(principal, id));
    },

    /**
     * Looks the TXT record up now (a wrong or missing record is not an error, nor a failed lookup).
     * A pending domain turns active when one of its strings is the token; an active one is checked
     * as the scheduled re-check does (see domainChecks). 409 when another account holds the
     * hostname active, unless its own token has been missing from the record for the grace period:
     * then this newer proof wins and that account's domain turns pending.
     */
    async verify(principal: Principal, id: string): Promise<Domain> {
      const domain = await owned(principal, id);
      let found: string[];
      try {
        found = await deps.lookupTxt(challengeName(domain.hostname));
      } catch (error) {
        deps.log.warn({ err: error, hostname: domain.hostname }, 'TXT lookup failed');
        return toDomain(domain);
      }
      if (domain.verifiedAt) return toDomain(await deps.checks.apply(domain, found));
      if (!found.includes(domain.verificationToken)) return toDomain(domain);
      const active = await activate(domain, found);
      if (!active) throw notFound('Domain not found');
      await deps.records.write(active);
      return toDomain(active);
    },

    async update(principal: Principal, id: string, body: UpdateDomainBody): Promise<Domain> {
      await owned(principal, id);
      const updated = await deps.domains.update(id, {
        notFoundUrl: body.notFoundUrl,
        allowedUrlPatterns: body.allowedUrlPatterns === null ? [] : body.allowedUrlPatterns,
      });
      if (!updated) throw notFound('Domain not found');
      if (updated.verifiedAt) await deps.records.write(updated);
      return toDomain(updated);
    },

    /** Removes a domain without links (409 while it has some). */
    async delete(principal: Principal, id: string): Promise<void> {
      await owned(principal, id);
      let deleted: DomainRecord | undefined;
      try {
        deleted = await deps.domains.delete(id);
      } catch (error) {
        if (!(error instanceof DomainInUseError)) throw error;
        throw conflict('Links use this domain; delete them first', [{ field: 'id', message: 'has links' }]);
      }
      if (deleted?.verifiedAt) {
        await uncacheDomain(deps.redis, deps.keys, deleted.hostname).catch((error: unknown) =>
          deps.log.warn({ err: error, hostname: deleted.hostname }, 'domain cache delete failed'),
        );
      }
    },
  };
}
export type DomainsService = ReturnType<typeof domainsService>;
