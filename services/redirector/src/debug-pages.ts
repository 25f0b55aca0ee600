import { type AssociatedApp, BoundedMap, type Config } from '@deeplink/core';
import { appsRepository, type Sql } from '@deeplink/core/db';
import type { CachedLink } from '@deeplink/core/redis';
import { type Logger, rateLimitedLog, withTimeout } from '@deeplink/core/runtime';
import { checkAssociationFiles, type FileCheck } from './association-check.js';
import { DEBUG_PAGE_CSP, renderDebugPage, type SdkCall, visitorCases } from './debug-page.js';
import { createMissLimiter } from './miss-limiter.js';
import { type Page, page, TYPE } from './responses.js';
import { wire } from './wire.js';

/**
 * Debug pages per client address: a token bucket of this rate (per second) and burst, like the
 * unknown-code limiter. A page fetches two files and queries PostgreSQL; a person debugging a link
 * reloads it now and then.
 */
const PAGES_PER_SECOND = 0.2;
const PAGES_BURST = 5;
/** Pages being built at once, from every address together; past it the page answers 503. */
const MAX_PAGES_IN_FLIGHT = 8;
/** How long a domain's checked files are reused, so a burst of pages fetches each file once. */
const CHECK_REUSE_MS = 10_000;
const CHECKS_KEPT = 1_000;
const DB_TIMEOUT_MS = 3_000;

const POLICY = wire(DEBUG_PAGE_CSP);
const RETRY_AFTER = wire('Retry-After');

/** The domain a link is debugged on: its public hostname, its registered apps, and the link's short URL there. */
export interface DebugDomain {
  hostname: string;
  apps: readonly AssociatedApp[];
  shortUrl: string;
}

export interface DebugPagesDeps {
  config: Pick<Config, 'BRAND_NAME' | 'ASSOCIATION_CHECK_ORIGIN'>;
  sql: Sql;
  logger: Logger;
}

/**
 * The debug page of a link (`?d=1`), and what bounds it: a budget per client address, a cap on
 * pages built at once, and the checked files of a domain reused for a few seconds.
 */
export function createDebugPages({ config, sql, logger }: DebugPagesDeps) {
  const limiter = createMissLimiter({ ratePerSecond: PAGES_PER_SECOND, burst: PAGES_BURST });
  const apps = appsRepository(sql);
  const checks = new BoundedMap<string, { until: number; promise: Promise<FileCheck[]> }>(CHECKS_KEPT);
  const warn = rateLimitedLog(logger, 'warn');
  let inFlight = 0;

  const answer = (status: 200 | 404, html: string): Page<200 | 404> => page(status, TYPE.html, html, undefined, POLICY);

  /** The domain's files, checked for the link's path and apps (reused for CHECK_REUSE_MS). */
  function checked(link: CachedLink, domain: DebugDomain, path: string): Promise<FileCheck[]> {
    const key = `${domain.hostname}${path} ${link.iosLink?.bundleId ?? ''} ${link.androidLink?.appPackageName ?? ''}`;
    const now = Date.now();
    const kept = checks.get(key);
    if (kept !== undefined && now < kept.until) return kept.promise;
    const origin = new URL(config.ASSOCIATION_CHECK_ORIGIN ?? `https://${domain.hostname}`);
    const promise = checkAssociationFiles(
      { hostname: domain.hostname, path, origin, publicOnly: config.ASSOCIATION_CHECK_ORIGIN === undefined },
      { domain: domain.apps, iosBundleId: link.iosLink?.bundleId, androidPackage: link.androidLink?.appPackageName },
    );
    checks.set(key, { until: now + CHECK_REUSE_MS, promise });
    return promise;
  }

  /** The last App SDK call of each app the link opens; apps its owner never registered are named apart. */
  async function sdkCalls(link: CachedLink): Promise<{ calls: SdkCall[]; unregistered: string[] }> {
    const bundleId = link.iosLink?.bundleId ?? null;
    const packageName = link.androidLink?.appPackageName ?? null;
    if (bundleId === null && packageName === null) return { calls: [], unregistered: [] };
    let calls: SdkCall[];
    try {
      calls = await withTimeout(apps.keyUsesForLink(link.id, bundleId, packageName), DB_TIMEOUT_MS, 'app key uses');
    } catch (error) {
      warn({ err: error }, 'debug page: app key uses unavailable');
      return { calls: [], unregistered: [] };
    }
    const registered = (platform: SdkCall['platform']) => calls.some((call) => call.platform === platform);
    const unregistered = [
      ...(bundleId !== null && !registered('ios') ? [`${bundleId} (iOS)`] : []),
      ...(packageName !== null && !registered('android') ? [`${packageName} (Android)`] : []),
    ];
    return { calls, unregistered };
  }

  return {
    /**
     * Whether `address` may have a page now: there is room for one more (MAX_PAGES_IN_FLIGHT) and
     * the address has a token left, which this spends.
     */
    admits(address: string, now: number): boolean {
      if (inFlight >= MAX_PAGES_IN_FLIGHT || !limiter.allows(address, now)) return false;
      limiter.spend(address, now);
      return true;
    },

    /** Builds an admitted page (its link lookup included), counted among the pages in flight until it is done. */
    async serve<P extends Page>(build: () => Promise<P>): Promise<P> {
      inFlight++;
      try {
        return await build();
      } finally {
        inFlight--;
      }
    },

    /**
     * The page of a link record on a domain: where each visitor goes, the domain's association
     * files, the apps' last SDK calls. A function of the record, so any path that has one (a short
     * code, a long link's query) can answer with it, admitted and served like the short code's
     * (see request-path.ts).
     */
    async forLink(link: CachedLink, domain: DebugDomain, now = Date.now()): Promise<Page<200>> {
      const path = new URL(domain.shortUrl).pathname;
      const [files, sdk] = await Promise.all([checked(link, domain, path), sdkCalls(link)]);
      const html = renderDebugPage({
        brand: config.BRAND_NAME,
        shortUrl: domain.shortUrl,
        cases: visitorCases(link, domain.shortUrl, now),
        checks: files,
        sdkCalls: sdk.calls,
        unregistered: sdk.unregistered,
      });
      return answer(200, html) as Page<200>;
    },

    /** The page of a code no link has on the domain. */
    forUnknown(domain: DebugDomain): Page<404> {
      const html = renderDebugPage({
        brand: config.BRAND_NAME,
        shortUrl: domain.shortUrl,
        cases: undefined,
        checks: [],
        sdkCalls: [],
        unregistered: [],
      });
      return answer(404, html) as Page<404>;
    },

    /** Too many pages for this address, or for all together: try again shortly. */
    busy: page(429, TYPE.text, wire('Too Many Requests: debug pages are limited per client; try again in a few seconds\n'), [
      [RETRY_AFTER, wire('5')],
    ]),
  };
}

export type DebugPages = ReturnType<typeof createDebugPages>;
