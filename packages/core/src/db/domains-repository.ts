import type { AssociatedApp } from '../apps/association.js';
import type { Sql } from './client.js';
import { appsRepository, toAssociatedApp, type AppRecord } from './apps-repository.js';
import { isForeignKeyViolation, isUniqueViolation } from './errors.js';
import { isUuid } from './uuid.js';

export interface DomainRecord {
  id: string;
  userId: string;
  hostname: string;
  verificationToken: string;
  verifiedAt: Date | null;
  notFoundUrl: string | null;
  /** Where the domain's long links may send visitors; empty: it has none. */
  allowedUrlPatterns: string[];
  createdAt: Date;
  /** When DNS last answered a check of the TXT record (re-checks and verify calls). */
  lastCheckedAt: Date | null;
  /** Since when the TXT record has lacked the token; null while it holds it. */
  verificationLostAt: Date | null;
}

/** What the redirector needs of an active custom domain (cached in Redis by hostname). */
export interface CachedDomain {
  id: string;
  notFoundUrl?: string;
  /** The owner's apps, whose association files the domain serves. */
  apps: AssociatedApp[];
  /**
   * Where the domain's long links may send visitors; absent when it has no patterns (then it
   * answers no long link). Records cached before it existed lack it too, which is the same.
   */
  allowedUrlPatterns?: string[];
  /** The domain's owner, whose account its long links are created in; with allowedUrlPatterns only. */
  userId?: string;
}

/** Thrown by create when the account already added this hostname. */
export class DomainTakenError extends Error {
  override name = 'DomainTakenError';
}
/** Thrown by activate when another account holds the hostname active. */
export class HostnameActiveElsewhereError extends Error {
  override name = 'HostnameActiveElsewhereError';
}
/** Thrown by delete while links are on the domain. */
export class DomainInUseError extends Error {
  override name = 'DomainInUseError';
}

const columns = (sql: Sql) => sql`
  id, user_id AS "userId", hostname, verification_token AS "verificationToken", verified_at AS "verifiedAt",
  not_found_url AS "notFoundUrl", allowed_url_patterns AS "allowedUrlPatterns", created_at AS "createdAt", last_checked_at AS "lastCheckedAt",
  verification_lost_at AS "verificationLostAt"`;

/** Custom short-link domains. SQL for domains lives here and nowhere else. */
export function domainsRepository(sql: Sql) {
  return {
    /** Adds a pending domain; throws DomainTakenError when the account has it already. */
    async create(
      userId: string,
      hostname: string,
      verificationToken: string,
      { notFoundUrl, allowedUrlPatterns = [] }: { notFoundUrl?: string; allowedUrlPatterns?: string[] } = {},
    ): Promise<DomainRecord> {
      try {
        const [row] = await sql<DomainRecord[]>`
          INSERT INTO domains (user_id, hostname, verification_token, not_found_url, allowed_url_patterns)
          VALUES (${userId}, ${hostname}, ${verificationToken}, ${notFoundUrl ?? null}, ${sql.array(allowedUrlPatterns)}::text[])
          RETURNING ${columns(sql)}`;
        return row!;
      } catch (error) {
        if (isUniqueViolation(error, 'domains_user_hostname_key')) throw new DomainTakenError(hostname);
        throw error;
      }
    },

    async findById(id: string): Promise<DomainRecord | undefined> {
      if (!isUuid(id)) return undefined;
      const [row] = await sql<DomainRecord[]>`SELECT ${columns(sql)} FROM domains WHERE id = ${id}`;
      return row;
    },

    /** The user's active domain of this hostname, if any. */
    async findActive(userId: string, hostname: string): Promise<DomainRecord | undefined> {
      const [row] = await sql<DomainRecord[]>`
        SELECT ${columns(sql)} FROM domains WHERE user_id = ${userId} AND hostname = ${hostname} AND verified_at IS NOT NULL`;
      return row;
    },

    async listByUser(userId: string): Promise<DomainRecord[]> {
      return sql<DomainRecord[]>`SELECT ${columns(sql)} FROM domains WHERE user_id = ${userId} ORDER BY created_at, id`;
    },

    /** The user's active domains. */
    async activeByUser(userId: string): Promise<DomainRecord[]> {
      return sql<DomainRecord[]>`
        SELECT ${columns(sql)} FROM domains WHERE user_id = ${userId} AND verified_at IS NOT NULL ORDER BY created_at, id`;
    },

    /** Every active domain, for rebuilding the redirectors' domain records. */
    async allActive(): Promise<DomainRecord[]> {
      return sql<DomainRecord[]>`SELECT ${columns(sql)} FROM domains WHERE verified_at IS NOT NULL ORDER BY hostname`;
    },

    /** The active domain of this hostname, whichever account holds it. */
    async findActiveByHostname(hostname: string): Promise<DomainRecord | undefined> {
      const [row] = await sql<DomainRecord[]>`SELECT ${columns(sql)} FROM domains WHERE hostname = ${hostname} AND verified_at IS NOT NULL`;
      return row;
    },

    /**
     * Marks the domain verified (its record was just found holding the token); throws
     * HostnameActiveElsewhereError when another account holds the hostname.
     */
    async activate(id: string): Promise<DomainRecord | undefined> {
      try {
        const [row] = await sql<DomainRecord[]>`
          UPDATE domains SET verified_at = coalesce(verified_at, now()), last_checked_at = now(), verification_lost_at = NULL
          WHERE id = ${id} RETURNING ${columns(sql)}`;
        return row;
      } catch (error) {
        if (isUniqueViolation(error, 'domains_active_hostname_key')) throw new HostnameActiveElsewhereError();
        throw error;
      }
    },

    /**
     * Records a check of an active domain's TXT record: holding the token ends a loss; lacking it
     * starts one, unless one is under way. Undefined when the domain is not active.
     */
    async recordCheck(id: string, holdsToken: boolean): Promise<DomainRecord | undefined> {
      const [row] = await sql<DomainRecord[]>`
        UPDATE domains SET last_checked_at = now(),
          verification_lost_at = CASE WHEN ${holdsToken}::boolean THEN NULL ELSE coalesce(verification_lost_at, now()) END
        WHERE id = ${id} AND verified_at IS NOT NULL RETURNING ${columns(sql)}`;
      return row;
    },

    /**
     * Makes an active domain pending again when its record has lacked the token for `graceSeconds`
     * or more; undefined (and nothing changed) otherwise. The condition is checked in the same
     * statement, so a verification that ended the loss meanwhile wins.
     */
    async releaseLost(id: string, graceSeconds: number): Promise<DomainRecord | undefined> {
      const [row] = await sql<DomainRecord[]>`
        UPDATE domains SET verified_at = NULL
        WHERE id = ${id} AND verified_at IS NOT NULL AND verification_lost_at <= now() - ${graceSeconds}::int * interval '1 second'
        RETURNING ${columns(sql)}`;
      return row;
    },

    /** Changes the settings given (undefined: kept; a null notFoundUrl clears it). */
    async update(
      id: string,
      { notFoundUrl, allowedUrlPatterns }: { notFoundUrl?: string | null; allowedUrlPatterns?: string[] },
    ): Promise<DomainRecord | undefined> {
      const [row] = await sql<DomainRecord[]>`
        UPDATE domains SET
          not_found_url = CASE WHEN ${notFoundUrl !== undefined}::boolean THEN ${notFoundUrl ?? null} ELSE not_found_url END,
          allowed_url_patterns = coalesce(${allowedUrlPatterns === undefined ? null : sql.array(allowedUrlPatterns)}::text[], allowed_url_patterns)
        WHERE id = ${id} RETURNING ${columns(sql)}`;
      return row;
    },

    /** Removes a domain; throws DomainInUseError while links are on it. */
    async delete(id: string): Promise<DomainRecord | undefined> {
      try {
        const [row] = await sql<DomainRecord[]>`DELETE FROM domains WHERE id = ${id} RETURNING ${columns(sql)}`;
        return row;
      } catch (error) {
        if (isForeignKeyViolation(error, 'links_domain_id_fkey')) throw new DomainInUseError();
        throw error;
      }
    },

    /** The redirector's record of an active hostname, or undefined when no account holds it active. */
    async cachedDomain(hostname: string): Promise<CachedDomain | undefined> {
      const [domain] = await sql<
        DomainRecord[]
      >`SELECT ${columns(sql)} FROM domains WHERE hostname = ${hostname} AND verified_at IS NOT NULL`;
      if (!domain) return undefined;
      return toCachedDomain(domain, await appsRepository(sql).listByUser(domain.userId));
    },
  };
}
export type DomainsRepository = ReturnType<typeof domainsRepository>;

/** An active domain as the redirector reads it, with its owner's apps. */
export function toCachedDomain(domain: DomainRecord, apps: AppRecord[]): CachedDomain {
  return {
    id: domain.id,
    ...(domain.notFoundUrl && { notFoundUrl: domain.notFoundUrl }),
    apps: apps.map(toAssociatedApp),
    ...(domain.allowedUrlPatterns.length > 0 && { allowedUrlPatterns: domain.allowedUrlPatterns, userId: domain.userId }),
  };
}
