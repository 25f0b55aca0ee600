import {
  BoundedMap,
  type Config,
  type DynamicLinkParams,
  dynamicLinkKey,
  generateShortCode,
  longLinkParams,
  type RedisKeys,
} from '@deeplink/core';
import { findOrCreateDynamicLink, linksRepository, type Sql } from '@deeplink/core/db';
import type { RedisClient } from '@deeplink/core/redis';
import { type Logger, rateLimitedLog, withTimeout } from '@deeplink/core/runtime';
import type { LongLinkDomain } from './domain-lookup.js';

// Long dynamic links (`/?link=…&apn=…`, Firebase's format): each distinct set of parameters on a
// custom domain is a link of the domain's owner, made on its first visit through the one mapping
// (findOrCreateDynamicLink), and from then on answered as that link: the same cache, answers and
// clicks as its short code. This process remembers which code each long link became.

/** The FDL parameters that are destinations: a long link is answered only when each it has is allowed. */
const DESTINATIONS = ['link', 'afl', 'ifl', 'ipfl', 'ofl'] as const;
/** Long links whose code this process remembers, and the bytes they may hold (hostname and key, about 150 bytes each). */
const CODES_MAX = 100_000;
const CODES_MAX_BYTES = 32 * 1024 * 1024;
const DB_TIMEOUT_MS = 3_000;

/** A long link a visit asks for, its destinations allowed on the domain. */
export interface WantedLongLink {
  params: DynamicLinkParams;
  /** The canonical key of its parameters (links.dynamic_link_key). */
  key: string;
}

/** What finding a long link's link came to: its code, or null (the domain is at its cap, or no link can have these parameters). */
export interface LongLinkEntry {
  code: string | null;
  /** A link was made for it just now. */
  created: boolean;
}

interface RememberedCode {
  code: string;
  /** Until when it is used without asking PostgreSQL again (a deleted link is made again after that). */
  until: number;
}

export interface LongLinksDeps {
  config: Pick<Config, 'LONG_LINKS_PER_DOMAIN_MAX' | 'MAX_DESTINATION_BYTES' | 'LINK_CACHE_TTL_MS'>;
  keys: RedisKeys;
  redis: RedisClient;
  sql: Sql;
  logger: Logger;
}

export type LongLinks = ReturnType<typeof createLongLinks>;

export function createLongLinks({ config, keys, redis, sql, logger }: LongLinksDeps) {
  const codes = new BoundedMap<string, RememberedCode>(CODES_MAX, CODES_MAX_BYTES, (_, id) => 2 * id.length + 100);
  const links = linksRepository(sql);
  const warn = rateLimitedLog(logger, 'warn');
  const idOf = (hostname: string, key: string) => `${hostname}\n${key}`;
  /** Loads in progress: visits of one long link meanwhile share one. */
  const pending = new Map<string, Promise<LongLinkEntry>>();

  /** Finds the link of the long link, or makes it unless the domain has made LONG_LINKS_PER_DOMAIN_MAX already. */
  async function findOrCreate(domain: LongLinkDomain, wanted: WantedLongLink, hostname: string): Promise<LongLinkEntry> {
    const max = config.LONG_LINKS_PER_DOMAIN_MAX;
    if ((await links.countDynamicLinks(domain.domainId, max)) >= max) {
      const existing = await links.findByDynamicLinkKey(domain.userId, domain.domainId, wanted.key);
      if (existing) return { code: existing.code, created: false };
      warn({ hostname, max }, 'long link refused: the domain has made LONG_LINKS_PER_DOMAIN_MAX links of long links');
      return { code: null, created: false };
    }
    const found = await findOrCreateDynamicLink(
      { sql, redis, keys, onCacheError: (error) => warn({ err: error }, 'long link cache write failed') },
      {
        userId: domain.userId,
        domainId: domain.domainId,
        params: wanted.params,
        makeCode: () => generateShortCode(),
        maxDestinationBytes: config.MAX_DESTINATION_BYTES,
      },
    );
    if (!found.ok) return { code: null, created: false };
    return { code: found.link.code, created: found.created };
  }

  return {
    /**
     * The long link `query` asks for on `domain`: undefined when it is none (no `link`), or when a
     * destination it has matches none of the domain's allowed URL patterns.
     */
    wanted(query: string, domain: LongLinkDomain): WantedLongLink | undefined {
      const params = longLinkParams(new URLSearchParams(query));
      if (params === null) return undefined;
      for (const name of DESTINATIONS) {
        const url = params[name];
        if (url !== undefined && !domain.allows(url)) return undefined;
      }
      return { params, key: dynamicLinkKey(params) };
    },

    /** The code of the long link's link, when this process found it lately. */
    peek(hostname: string, key: string, now: number): string | undefined {
      const remembered = codes.get(idOf(hostname, key));
      return remembered !== undefined && now < remembered.until ? remembered.code : undefined;
    },

    /** Finds (or makes) the long link's link in PostgreSQL, and remembers its code. */
    load(hostname: string, domain: LongLinkDomain, wanted: WantedLongLink): Promise<LongLinkEntry> {
      const id = idOf(hostname, wanted.key);
      const existing = pending.get(id);
      if (existing) return existing;
      const promise = withTimeout(findOrCreate(domain, wanted, hostname), DB_TIMEOUT_MS, 'long link lookup')
        .then((entry) => {
          if (entry.code !== null) codes.set(id, { code: entry.code, until: Date.now() + config.LINK_CACHE_TTL_MS });
          return entry;
        })
        .finally(() => pending.delete(id));
      pending.set(id, promise);
      return promise;
    },

    /** Codes remembered, for tests and the metrics. */
    size: () => codes.size,
  };
}
