import {
  type AppOpenBody,
  type AppOpenResult,
  isExpired,
  notFound,
  parseAppUrl,
  parseWebUrl,
  shortUrls,
  unauthorized,
  withParameters,
} from '@deeplink/core';
import type { AppRecord, AppSdkCall, AppsRepository, LinkRecord, LinksRepository } from '@deeplink/core/db';
import { toCachedLink } from '@deeplink/core/redis';
import type { AppOpenEvents } from './app-open-events.js';
import { hashApiKey } from './tokens.js';

/** An app key's last call (shown on the debug page) moves at most this often: a write per call would cost more than the call. */
export const APP_KEY_USAGE_RESOLUTION_SECONDS = 60;

/** A short code as the redirector serves it (its path is the code, nothing else). */
const CODE = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * One answer for every URL the app cannot have: unknown, on a domain the app is not associated
 * with, another account's link, deleted or expired. Always the same words, so the answer tells
 * nothing about links the caller does not own.
 */
const noLink = () => notFound('No link of this app at this URL');

/**
 * What a link holds for an app, as /app/open and /app/install answer it; undefined when the link
 * opens nothing (expired, or without a web destination), since the redirector would route nobody
 * anywhere with it either.
 */
export function linkAnswers(shortUrlBase: string) {
  const shortUrl = shortUrls(shortUrlBase);

  /** The link's app URL and minimum version for this app: only when the link's iosLink or androidLink targets it. */
  const forApp = (app: AppRecord, link: LinkRecord): { deepLink?: string; minimumVersion?: string } => {
    const target =
      app.platform === 'ios'
        ? link.iosLink?.bundleId === app.bundleId
          ? link.iosLink
          : undefined
        : link.androidLink?.appPackageName === app.packageName
          ? link.androidLink
          : undefined;
    const deepLink = parseAppUrl(target?.url)?.href;
    if (!target || !deepLink) return {};
    return { deepLink, ...(target.minimumVersion && { minimumVersion: target.minimumVersion }) };
  };

  return (app: AppRecord, link: LinkRecord, now: number): AppOpenResult | undefined => {
    const routed = toCachedLink(link);
    const web = parseWebUrl(routed.defaultUrl);
    if (isExpired(routed, now) || !web) return undefined;
    const parameters = routed.customParameters ?? {};
    return {
      link: { id: link.id, code: link.code, url: shortUrl(link.code, link.domain) },
      ...forApp(app, link),
      parameters,
      webUrl: withParameters(web, parameters),
    };
  };
}

/**
 * The app half of the links: an app opened through a Universal Link or an App Link hands over the
 * URL, with its publishable app key, and gets what the link holds for it. Keys are looked up in
 * PostgreSQL on every call (by hash, one indexed row), so a rotated key stops at once on every
 * API instance.
 */
export function appOpenService(deps: { apps: AppsRepository; links: LinksRepository; events: AppOpenEvents; shortUrlBase: string }) {
  const base = new URL(deps.shortUrlBase);
  // SHORT_URL_BASE may carry a path (behind a proxy that strips it); the code follows it.
  const basePath = base.pathname.replace(/\/+$/, '');

  /**
   * Where a URL points: the code, and the custom hostname (undefined on the default domain). The
   * default domain is SHORT_URL_BASE's hostname, whatever the scheme or port; any other hostname
   * is looked up as a custom domain, and only an active one of the app's owner has its links.
   */
  const placeOf = (value: string): { code: string; hostname?: string } | undefined => {
    const url = new URL(value);
    const hostname = url.hostname.toLowerCase().replace(/\.$/, '');
    const isDefault = hostname === base.hostname.toLowerCase();
    let path = url.pathname;
    if (isDefault && basePath) {
      if (!path.startsWith(`${basePath}/`)) return undefined;
      path = path.slice(basePath.length);
    }
    const code = path.slice(1);
    if (!CODE.test(code)) return undefined;
    return isDefault ? { code } : { code, hostname };
  };

  const answer = linkAnswers(deps.shortUrlBase);

  return {
    /** The app an X-App-Key header names; 401 without one or for a key no app has (now). */
    async authenticate(key: string | undefined): Promise<AppRecord> {
      const app = key ? await deps.apps.findByKeyHash(hashApiKey(key)) : undefined;
      if (!app) throw unauthorized(key ? 'The app key is invalid or was replaced' : 'Send the app key in the X-App-Key header');
      return app;
    },

    /**
     * Records that the app's key made `call`, when the last record is a minute old or more (no
     * write otherwise). Bookkeeping only: never waited for, and a failed write fails no call.
     */
    recordCall(app: AppRecord, call: AppSdkCall): void {
      if (app.keyLastUsedAt && Date.now() - app.keyLastUsedAt.getTime() < APP_KEY_USAGE_RESOLUTION_SECONDS * 1000) return;
      deps.apps.touchKey(app.id, call, APP_KEY_USAGE_RESOLUTION_SECONDS).catch(() => {});
    },

    /**
     * What the link at `body.url` holds for the app. The open is queued first, as APP_FIRST_OPEN
     * or APP_RE_OPEN (firstLaunch), counted once per openId: a call that could not queue it fails
     * (503) rather than answer as if it had been counted.
     */
    async open(app: AppRecord, body: AppOpenBody, now = Date.now()): Promise<AppOpenResult> {
      const place = placeOf(body.url);
      const link = place && (await deps.links.findByCode(place.code, place.hostname));
      if (!link || link.userId !== app.userId) throw noLink();
      const result = answer(app, link, now);
      if (!result) throw noLink();
      await deps.events.record(app, link.id, body, now);
      return result;
    },
  };
}
export type AppOpenService = ReturnType<typeof appOpenService>;
