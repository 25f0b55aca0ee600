import type { CachedLink } from '../links/link-fields.js';
import type { Platform } from './platform.js';
import { parseAppUrl, parseWebUrl } from './safe-url.js';

/**
 * Where a visit to a live link goes: a 302, the iOS "try the app" page, or no destination at all.
 * `toStore` marks a route that sends a visitor without the app to an app store (an intent or page
 * whose fallback is a store, or a redirect straight to one): analytics count it as a store REDIRECT.
 */
export type Route =
  | { kind: 'redirect'; location: string; toStore?: true }
  | { kind: 'app-page'; appUrl: string; fallbackUrl: string; toStore?: true }
  /** Nothing safe to send the visitor to (a corrupt record): answer 404. */
  | { kind: 'unavailable' };

/** Query parameter carrying minimumVersion to the app (intent extra on Android, query on iOS). */
export const MIN_VERSION_PARAM = 'min_version';

const playStoreUrl = (appPackage: string) => `https://play.google.com/store/apps/details?id=${encodeURIComponent(appPackage)}`;
const appStoreUrl = (appStoreId: string | undefined) =>
  appStoreId === undefined ? undefined : `https://apps.apple.com/app/id${encodeURIComponent(appStoreId)}`;

/** App store hosts: a URL on one of them (or a market: URL) is a store page. */
const STORE_HOSTS: ReadonlySet<string> = new Set(['play.google.com', 'apps.apple.com', 'itunes.apple.com']);

/** Whether `url` opens an app store: the Play Store, the App Store, or Android's market: scheme. */
export function isStoreUrl(url: string): boolean {
  if (url.startsWith('market:')) return true;
  const host = parseWebUrl(url)?.hostname;
  return host !== undefined && STORE_HOSTS.has(host);
}

/** `route`, marked when `destination` (its fallback, or its location) is a store. */
const markStore = <R extends Route>(route: R, destination: string): R => (isStoreUrl(destination) ? { ...route, toStore: true } : route);

/** Whether the link has expired at `now` (epoch ms): visits then get 410. Checked per visit, apart from the route. */
export const isExpired = (link: CachedLink, now: number): boolean => link.expiresAt !== undefined && link.expiresAt <= now;

/**
 * The routing rules (see docs/redirect.md): the platform's route of a link, whatever the time.
 * Pure: depends on nothing but its arguments, so a caller may keep it for as long as it keeps the
 * link record.
 */
export function routeFor(link: CachedLink, platform: Platform): Route {
  const params = link.customParameters;
  const web = (value: string | undefined) => {
    const url = parseWebUrl(value);
    return url && withParameters(url, params);
  };
  const defaultUrl = web(link.defaultUrl);

  if (platform === 'android' && link.androidLink) {
    const { url, appPackageName, minimumVersion, fallbackUrl } = link.androidLink;
    const appUrl = parseAppUrl(url);
    const fallback = web(fallbackUrl) ?? web(playStoreUrl(appPackageName));
    if (appUrl && fallback) {
      return markStore({ kind: 'redirect', location: intentUrl(appUrl, appPackageName, fallback, minimumVersion) }, fallback);
    }
  }

  if (platform === 'ios' && link.iosLink) {
    const appUrl = parseAppUrl(link.iosLink.url);
    // Without a fallback of its own, visitors without the app go to the App Store when the owner
    // registered the app with its id, else to the default URL.
    const fallback = web(link.iosLink.fallbackUrl) ?? web(appStoreUrl(link.iosApp?.appStoreId)) ?? defaultUrl;
    if (appUrl && fallback) {
      return markStore(
        { kind: 'app-page', appUrl: withMinimumVersion(appUrl, link.iosLink.minimumVersion), fallbackUrl: fallback },
        fallback,
      );
    }
  }

  const location = (platform === 'desktop' ? web(link.desktopUrl) : undefined) ?? defaultUrl;
  return location ? markStore({ kind: 'redirect', location }, location) : { kind: 'unavailable' };
}

/** Appends tracking parameters to a browser URL, keeping (and never overwriting) those already there. */
export function withParameters(url: URL, params: Record<string, string> | undefined): string {
  if (!params) return url.href;
  // Appended as text rather than through searchParams, which would re-encode the existing query.
  const extra = Object.entries(params)
    .filter(([name]) => !url.searchParams.has(name))
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`);
  if (extra.length === 0) return url.href;
  const query = url.search.length > 1 ? `${url.search.slice(1)}&` : '';
  url.search = `?${query}${extra.join('&')}`;
  return url.href;
}

/** Adds min_version to an app URL's query unless present; the app decides what to do with it. */
function withMinimumVersion(url: URL, minimumVersion: string | undefined): string {
  if (!minimumVersion || url.searchParams.has(MIN_VERSION_PARAM)) return url.href;
  const query = url.search.length > 1 ? `${url.search.slice(1)}&` : '';
  url.search = `?${query}${MIN_VERSION_PARAM}=${encodeURIComponent(minimumVersion)}`;
  return url.href;
}

/**
 * Chrome's intent syntax: the deep link without its scheme, then the scheme, package and extras.
 * Used for http(s) App Links too, so Chrome opens the app instead of staying on the web page.
 */
function intentUrl(appUrl: URL, appPackage: string, fallbackUrl: string, minimumVersion: string | undefined): string {
  const scheme = appUrl.protocol.slice(0, -1);
  // Everything after "scheme:", minus the fragment (the intent section takes that place).
  const rest = appUrl.href.slice(appUrl.protocol.length).split('#', 1)[0]!;
  const extras = [
    `scheme=${encodeURIComponent(scheme)}`,
    `package=${encodeURIComponent(appPackage)}`,
    `S.browser_fallback_url=${encodeURIComponent(fallbackUrl)}`,
  ];
  if (minimumVersion) extras.push(`S.${MIN_VERSION_PARAM}=${encodeURIComponent(minimumVersion)}`);
  return `intent:${rest}#Intent;${extras.join(';')};end`;
}

/**
 * The destinations of a link that would be longer than `maxBytes` once its customParameters are
 * merged in (a Location header, an intent URL, the iOS page's targets), each named by the field
 * that sets it. Checked when a link is created or changed, so no visit carries an outsized answer.
 */
export function oversizedDestinations(link: CachedLink, maxBytes: number): { field: string; message: string }[] {
  const problems = new Map<string, string>();
  const check = (field: string, url: string | undefined) => {
    if (url !== undefined && Buffer.byteLength(url) > maxBytes) {
      problems.set(
        field,
        `is longer than ${maxBytes} bytes as a destination, with customParameters added (${Buffer.byteLength(url)} bytes)`,
      );
    }
  };
  for (const platform of ['android', 'ios', 'desktop'] as const) {
    const route = routeFor(link, platform);
    const field =
      platform === 'android' && link.androidLink
        ? 'androidLink'
        : platform === 'ios' && link.iosLink
          ? 'iosLink'
          : platform === 'desktop' && link.desktopUrl
            ? 'desktopUrl'
            : 'defaultUrl';
    if (route.kind === 'redirect') check(field, route.location);
    if (route.kind === 'app-page') {
      check(field, route.appUrl);
      check(field, route.fallbackUrl);
    }
  }
  return [...problems].map(([field, message]) => ({ field, message }));
}
