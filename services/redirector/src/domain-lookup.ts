import {
  appleAppSiteAssociation,
  assetLinks,
  type AssociatedApp,
  BoundedMap,
  type Config,
  compileUrlPatterns,
  MISSING_LINK,
  type RedisKeys,
  type UrlAllowList,
} from '@deeplink/core';
import { type CachedDomain, domainsRepository, type Sql } from '@deeplink/core/db';
import type { RedisClient } from '@deeplink/core/redis';
import { type Logger, rateLimitedLog, withTimeout } from '@deeplink/core/runtime';
import { answerBytes, type Page, page, type Redirect, redirectTo, TYPE } from './responses.js';
import { wire } from './wire.js';

/** Hostnames remembered in process, known or unknown; a deployment has far fewer domains. */
const DOMAIN_CACHE_MAX = 10_000;
/**
 * …and the bytes they may hold: hostnames of unknown hosts (at most 253 characters each, see
 * hostnames.ts) and, for known domains, their prepared association files.
 */
export const DOMAIN_CACHE_MAX_BYTES = 16 * 1024 * 1024;
const DB_TIMEOUT_MS = 3_000;
/** How long a record this process copied from PostgreSQL stays in Redis (the API's own writes never expire). */
const REFILL_TTL_SECONDS = 24 * 60 * 60;

/** A domain's answers, prepared once: the files and the not-found redirect it serves. */
export interface DomainAnswers {
  /** The apps its files name (the debug page checks the files the public gets against them). */
  apps: readonly AssociatedApp[];
  /** apple-app-site-association, or undefined when no iOS app is attached (404). */
  apple: Page<200> | undefined;
  /** assetlinks.json, or undefined when no Android app is attached (404). */
  android: Page<200> | undefined;
  /** The redirect of unknown codes (to the domain's not-found URL), or undefined for the 404 page. */
  notFound: Redirect | undefined;
  /** What its long links (/?link=…) need; undefined: it answers none (no allowed URL patterns). */
  longLinks: LongLinkDomain | undefined;
}

/** A custom domain that answers long links: in whose account they are, and where they may go. */
export interface LongLinkDomain {
  domainId: string;
  /** The domain's owner, whose account each new long link is created in. */
  userId: string;
  /** Whether a destination matches one of the domain's allowed URL patterns. */
  allows: UrlAllowList;
  /** What the patterns weigh in the cache, in bytes. */
  bytes: number;
}

/** The long-link settings of a cached domain record, when it has allowed URL patterns. */
export function longLinkDomain(record: CachedDomain): LongLinkDomain | undefined {
  const patterns = record.allowedUrlPatterns;
  if (patterns === undefined || patterns.length === 0 || record.userId === undefined) return undefined;
  return {
    domainId: record.id,
    userId: record.userId,
    allows: compileUrlPatterns(patterns),
    bytes: patterns.reduce((sum, pattern) => sum + 2 * pattern.length + 100, 0),
  };
}

/** What the process knows of a hostname: null for one no account holds active (every answer a 404). */
export interface DomainEntry {
  answers: DomainAnswers | null;
  freshUntil: number;
}

/** The answers of a domain serving `apps`, with `notFoundUrl` for unknown codes. */
export function domainAnswers(
  apps: readonly AssociatedApp[],
  notFoundUrl: string | undefined,
  longLinks: LongLinkDomain | undefined = undefined,
): DomainAnswers {
  return {
    apps,
    longLinks,
    apple: apps.some((app) => app.platform === 'ios') ? page(200, TYPE.json, wire(appleAppSiteAssociation(apps))) : undefined,
    android: apps.some((app) => app.platform === 'android') ? page(200, TYPE.json, wire(assetLinks(apps))) : undefined,
    notFound: notFoundUrl === undefined ? undefined : redirectTo(wire(notFoundUrl)),
  };
}

/** What an entry costs, roughly: its hostname (two bytes a character), its prepared answers, and the objects around them. */
export function domainEntryBytes(entry: DomainEntry, hostname: string): number {
  const { apple, android, notFound, longLinks } = entry.answers ?? {};
  return 2 * hostname.length + 200 + answerBytes(apple) + answerBytes(android) + answerBytes(notFound) + (longLinks?.bytes ?? 0);
}

/** The in-process cache of hostnames, known or unknown, bounded by entries and by bytes. */
export const createDomainCache = (maxBytes = DOMAIN_CACHE_MAX_BYTES) =>
  new BoundedMap<string, DomainEntry>(DOMAIN_CACHE_MAX, maxBytes, domainEntryBytes);

export interface DomainLookupDeps {
  config: Pick<Config, 'LINK_CACHE_TTL_MS' | 'NEGATIVE_CACHE_TTL_SECONDS'>;
  keys: RedisKeys;
  redis: RedisClient;
  subscriber: RedisClient;
  sql: Sql;
  logger: Logger;
}

/**
 * Custom domains by hostname: in process → Redis → PostgreSQL, dropped on an invalidation message
 * (the API publishes one when a domain, or its owner's apps, change) and after LINK_CACHE_TTL_MS.
 */
export function createDomainLookup({ config, keys, redis, subscriber, sql, logger }: DomainLookupDeps) {
  const entries = createDomainCache();
  const pending = new Map<string, Promise<DomainEntry>>();
  const domains = domainsRepository(sql);
  const warn = rateLimitedLog(logger, 'warn');

  const onMessage = (channel: string, hostname: string) => {
    if (channel !== keys.domainInvalidations) return;
    entries.delete(hostname);
    pending.delete(hostname);
  };
  subscriber.on('message', onMessage);
  subscriber
    .subscribe(keys.domainInvalidations)
    .catch((error: unknown) => logger.error({ err: error }, 'domain invalidation subscribe failed'));

  async function fetchText(hostname: string): Promise<string> {
    try {
      const cached = await redis.get(keys.domain(hostname));
      if (cached !== null) return cached;
    } catch (error) {
      warn({ err: error }, 'redis domain lookup failed, using PostgreSQL');
    }
    const record = await withTimeout(domains.cachedDomain(hostname), DB_TIMEOUT_MS, 'database domain lookup');
    const text = record ? JSON.stringify(record) : MISSING_LINK;
    const ttl = record ? REFILL_TTL_SECONDS : config.NEGATIVE_CACHE_TTL_SECONDS;
    redis
      .set(keys.domain(hostname), text, 'EX', ttl, 'NX')
      .catch((error: unknown) => warn({ err: error }, 'redis domain cache fill failed'));
    return text;
  }

  function load(hostname: string): Promise<DomainEntry> {
    const existing = pending.get(hostname);
    if (existing) return existing;
    const promise = fetchText(hostname)
      .then((text) => {
        const record = text === MISSING_LINK ? null : (JSON.parse(text) as CachedDomain);
        const entry: DomainEntry = {
          answers: record && domainAnswers(record.apps, record.notFoundUrl, longLinkDomain(record)),
          freshUntil: Date.now() + (record ? config.LINK_CACHE_TTL_MS : config.NEGATIVE_CACHE_TTL_SECONDS * 1000),
        };
        // Not kept when an invalidation arrived meanwhile: the record read may be the old one.
        if (pending.get(hostname) === promise) entries.set(hostname, entry);
        return entry;
      })
      .finally(() => {
        if (pending.get(hostname) === promise) pending.delete(hostname);
      });
    pending.set(hostname, promise);
    return promise;
  }

  return {
    /** The hostname's entry when this process holds a fresh one. */
    peek(hostname: string, now: number): DomainEntry | undefined {
      const entry = entries.get(hostname);
      return entry !== undefined && now < entry.freshUntil ? entry : undefined;
    },
    load,
    /** Hostnames in the in-process cache, for the metrics gauge. */
    size: () => entries.size,
    /** Bytes the in-process cache holds (see domainEntryBytes), for the metrics gauge. */
    bytes: () => entries.weight,
    close(): void {
      subscriber.off('message', onMessage);
    },
  };
}
export type DomainLookup = ReturnType<typeof createDomainLookup>;
