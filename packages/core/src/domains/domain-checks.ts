import type { Sql } from '../db/client.js';
import { type DomainRecord, domainsRepository } from '../db/domains-repository.js';
import { linksRepository } from '../db/links-repository.js';
import type { RedisClient } from '../redis/client.js';
import { uncacheDomain } from '../redis/domain-cache.js';
import type { RedisKeys } from '../redis/keys.js';
import { uncacheLink } from '../redis/link-cache.js';
import type { Logger } from '../runtime/logger.js';
import { challengeName } from '../schemas/domains.js';
import type { TxtLookup } from './txt-lookup.js';

/** Lookups in flight at once during a re-check: DNS answers slowly, but no resolver should see a burst. */
const CONCURRENT_LOOKUPS = 8;
/** Link cache records dropped at once when a domain stops being active. */
const EVICT_CHUNK = 500;

export interface DomainRecheckResult {
  /** Active domains looked up. */
  checked: number;
  /** …whose record lacked the token (in their grace period, or released). */
  missing: number;
  /** …made pending again: their record lacked the token for the whole grace period. */
  released: number;
  /** …whose lookup failed (DNS unreachable, SERVFAIL): nothing was recorded for them. */
  failed: number;
}

/**
 * The rules of a verified custom domain over time. An active domain's TXT record is looked up again
 * (the worker's re-check, and every verify call): holding the token, the domain stays active; lacking
 * it, the loss is recorded and logged for the owner (`verificationLostAt`), and once it has lasted
 * `graceHours` the domain turns pending, its records leave the redirectors' caches and the hostname
 * is free for whichever account proves it next. A failed lookup decides nothing.
 */
export function domainChecks(deps: {
  sql: Sql;
  redis: RedisClient;
  keys: RedisKeys;
  lookupTxt: TxtLookup;
  graceHours: number;
  log: Pick<Logger, 'info' | 'warn'>;
}) {
  const domains = domainsRepository(deps.sql);
  const links = linksRepository(deps.sql);
  const graceSeconds = deps.graceHours * 60 * 60;
  const about = (domain: DomainRecord) => ({ domainId: domain.id, userId: domain.userId, hostname: domain.hostname });

  /** Drops the domain's record and its links' records from the caches, so no redirector serves them. */
  const stopServing = async (domain: DomainRecord) => {
    try {
      await uncacheDomain(deps.redis, deps.keys, domain.hostname);
      const ids = await links.cacheIdsOnDomain(domain.id);
      for (let start = 0; start < ids.length; start += EVICT_CHUNK) {
        await Promise.all(ids.slice(start, start + EVICT_CHUNK).map((id) => uncacheLink(deps.redis, deps.keys, id)));
      }
    } catch (error) {
      // The reconcile task (CRON_RECONCILE) removes what is left: it keeps only active domains' records.
      deps.log.warn({ err: error, ...about(domain) }, 'cache removal of an unverified domain failed');
    }
  };

  /**
   * Records what a lookup of an active domain's record found (`found`: its TXT strings) and
   * releases the domain when the token has been missing for the grace period. Returns the domain
   * as it is now.
   */
  const apply = async (domain: DomainRecord, found: string[]): Promise<DomainRecord> => {
    const holds = found.includes(domain.verificationToken);
    const checked = await domains.recordCheck(domain.id, holds);
    if (!checked) return (await domains.findById(domain.id)) ?? domain;
    if (holds) {
      if (domain.verificationLostAt) deps.log.info(about(domain), 'custom domain verification record found again');
      return checked;
    }
    const releaseAt = new Date(checked.verificationLostAt!.getTime() + graceSeconds * 1000);
    if (!domain.verificationLostAt) {
      deps.log.warn(
        { ...about(domain), releaseAt },
        'custom domain verification record lost; the domain stops being active unless it returns before releaseAt',
      );
    }
    const released = await domains.releaseLost(domain.id, graceSeconds);
    if (!released) return checked;
    deps.log.warn(
      { ...about(domain), lostAt: released.verificationLostAt },
      'custom domain unverified: its verification record was missing for the whole grace period',
    );
    await stopServing(released);
    return released;
  };

  return {
    apply,

    /** Looks up the record of every active domain again (the worker's scheduled task). */
    async recheckAll(): Promise<DomainRecheckResult> {
      const active = await domains.allActive();
      const result: DomainRecheckResult = { checked: 0, missing: 0, released: 0, failed: 0 };
      let next = 0;
      const checkNext = async (): Promise<void> => {
        for (let domain = active[next++]; domain; domain = active[next++]) {
          let found: string[];
          try {
            found = await deps.lookupTxt(challengeName(domain.hostname));
          } catch (error) {
            result.failed++;
            deps.log.warn({ err: error, ...about(domain) }, 'custom domain re-check: TXT lookup failed');
            continue;
          }
          result.checked++;
          const after = await apply(domain, found);
          if (after.verificationLostAt) result.missing++;
          if (!after.verifiedAt) result.released++;
        }
      };
      await Promise.all(Array.from({ length: CONCURRENT_LOOKUPS }, checkNext));
      return result;
    },
  };
}
export type DomainChecks = ReturnType<typeof domainChecks>;
