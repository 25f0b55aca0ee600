import { INSTALL_TOKEN_LENGTH, INSTALL_TOKEN_PARAM } from '../apps/install-tokens.js';
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

/** Whether `url` opens the Play Store: its web page or Android's market: scheme (the URLs that take a `referrer`). */
export function isPlayStoreUrl(url: string): boolean {
  return url.startsWith('market:') || parseWebUrl(url)?.hostname === 'play.google.com';
}

/** What routeFor puts into the routes it builds beyond the link itself. */
export interface RouteOptions {
  /**
   * The install token of the visit: an Android route to the Play Store carries it in the Play URL's
   * `referrer` (see withInstallReferrer). Without it, Play URLs are left as the link has them.
   */
  installToken?: string;
  /** The iOS visitor is on an iPad: the link's iPad fields, when it has any, take the place of the iPhone ones. */
  ipad?: boolean;
}

/** `route`, marked when `destination` (its fallback, or its location) is a store. */
const markStore = <R extends Route>(route: R, destination: string): R => (isStoreUrl(destination) ? { ...route, toStore: true } : route);

/** Whether the link routes iPads apart from iPhones: only then is an iOS visitor's agent looked at again. */
export const hasIpadRoute = (link: CachedLink): boolean =>
  link.iosLink !== undefined && (link.iosLink.ipadUrl !== undefined || link.iosLink.ipadFallbackUrl !== undefined);

/** Whether the link has expired at `now` (epoch ms): visits then get 410. Checked per visit, apart from the route. */
export const isExpired = (link: CachedLink, now: number): boolean => link.expiresAt !== undefined && link.expiresAt <= now;

/**
 * Why routeFor chose its route, for the debug page (`?d=1`): the rule that decided, and for an app
 * route where visitors without the app go and which field or store that came from.
 */
export type RouteReason = (
  | { rule: 'android-app'; appUrl: string; appPackage: string; fallbackUrl: string; fallbackFrom: 'link' | 'store' }
  | { rule: 'ios-app' | 'ios-forced-redirect'; fallbackFrom: 'ipad' | 'link' | 'store' | 'default-url' }
  | { rule: 'desktop-url' | 'default-url' | 'none' }
) & {
  /** The platform's own field, set but unusable (an unsafe URL): the visit fell through to a later rule. */
  passedOver?: 'androidLink' | 'iosLink' | 'desktopUrl';
};

/**
 * The routing rules (see docs/redirect.md): the platform's route of a link, whatever the time.
 * Pure: depends on nothing but its arguments, so a caller may keep it for as long as it keeps the
 * link record.
 */
export function routeFor(link: CachedLink, platform: Platform, options: RouteOptions = {}): Route {
  return explainRoute(link, platform, options).route;
}

/** routeFor's route with the reason it was chosen: the one place the rules are written. */
export function explainRoute(
  link: CachedLink,
  platform: Platform,
  { installToken, ipad = false }: RouteOptions = {},
): { route: Route; reason: RouteReason } {
  const params = link.customParameters;
  const web = (value: string | undefined) => {
    const url = parseWebUrl(value);
    return url && withParameters(url, params);
  };
  // On Android, every way to the Play Store carries the visit's install token.
  const toPlay = (url: string | undefined) =>
    url !== undefined && installToken !== undefined && platform === 'android' && isPlayStoreUrl(url)
      ? withInstallReferrer(url, installToken, params)
      : url;
  const defaultUrl = web(link.defaultUrl);
  let passedOver: RouteReason['passedOver'];

  if (platform === 'android' && link.androidLink) {
    const { url, appPackageName, minimumVersion, fallbackUrl } = link.androidLink;
    const appUrl = parseAppUrl(url);
    const own = web(fallbackUrl);
    const fallback = toPlay(own ?? web(playStoreUrl(appPackageName)));
    if (appUrl && fallback) {
      const route = markStore({ kind: 'redirect', location: intentUrl(appUrl, appPackageName, fallback, minimumVersion) }, fallback);
      const fallbackFrom = own === undefined ? 'store' : 'link';
      return {
        route,
        reason: { rule: 'android-app', appUrl: appUrl.href, appPackage: appPackageName, fallbackUrl: fallback, fallbackFrom },
      };
    }
    passedOver = 'androidLink';
  }

  if (platform === 'ios' && link.iosLink) {
    const ios = link.iosLink;
    const appUrl = parseAppUrl((ipad ? ios.ipadUrl : undefined) ?? ios.url);
    // Without a fallback of its own, visitors without the app go to the App Store when the owner
    // registered the app with its id, else to the default URL.
    const ipadOwn = ipad ? web(ios.ipadFallbackUrl) : undefined;
    const own = ipadOwn ?? web(ios.fallbackUrl);
    const store = own ?? web(appStoreUrl(link.iosApp?.appStoreId));
    const fallback = store ?? defaultUrl;
    const fallbackFrom = ipadOwn !== undefined ? 'ipad' : own !== undefined ? 'link' : store !== undefined ? 'store' : 'default-url';
    // Forced redirect: no page, straight to the fallback. An installed app still opens when the
    // short link's domain is associated with it (Universal Links open it before any request).
    if (fallback && ios.skipAppPage) {
      return {
        route: markStore({ kind: 'redirect', location: fallback }, fallback),
        reason: { rule: 'ios-forced-redirect', fallbackFrom },
      };
    }
    if (appUrl && fallback) {
      const route = markStore(
        { kind: 'app-page', appUrl: withMinimumVersion(appUrl, ios.minimumVersion), fallbackUrl: fallback },
        fallback,
      );
      return { route, reason: { rule: 'ios-app', fallbackFrom } };
    }
    passedOver = 'iosLink';
  }

  const desktop = platform === 'desktop' ? web(link.desktopUrl) : undefined;
  if (platform === 'desktop' && link.desktopUrl !== undefined && desktop === undefined) passedOver = 'desktopUrl';
  const location = toPlay(desktop ?? defaultUrl);
  const rule = desktop !== undefined ? 'desktop-url' : location !== undefined ? 'default-url' : 'none';
  const reason: RouteReason = passedOver === undefined ? { rule } : { rule, passedOver };
  return { route: location ? markStore({ kind: 'redirect', location }, location) : { kind: 'unavailable' }, reason };
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

/** The name of a query parameter (`name=value`, form-encoded), decoded; the raw text when it does not decode. */
function parameterName(pair: string): string {
  const name = pair.split('=', 1)[0]!.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

/** The value of a query parameter, decoded as a form decodes it; the raw text when it does not decode. */
function parameterValue(pair: string): string {
  const equals = pair.indexOf('=');
  const value = equals === -1 ? '' : pair.slice(equals + 1).replace(/\+/g, ' ');
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * A Play Store URL (web or market:) whose `referrer` carries `dl_token=<token>` and the link's
 * utm_* parameters, so both the app's first launch (through the Play Install Referrer API) and
 * Play Console's campaign reports read them. The referrer is one query string, URL-encoded once as
 * the value of `referrer`, as Google documents it. A referrer the URL already has is kept and
 * merged: its parameters win over the link's utm_* ones, but never over the token, which is ours
 * to write (an old dl_token in it is dropped). The rest of the URL is left byte for byte; the token
 * goes last, so it needs no encoding at any level (base64url) and a caller can find it as a slot.
 */
export function withInstallReferrer(playUrl: string, token: string, params: Record<string, string> | undefined): string {
  const hashAt = playUrl.indexOf('#');
  const hash = hashAt === -1 ? '' : playUrl.slice(hashAt);
  const beforeHash = hashAt === -1 ? playUrl : playUrl.slice(0, hashAt);
  const queryAt = beforeHash.indexOf('?');
  const path = queryAt === -1 ? beforeHash : beforeHash.slice(0, queryAt);
  const pairs =
    queryAt === -1
      ? []
      : beforeHash
          .slice(queryAt + 1)
          .split('&')
          .filter(Boolean);
  const existing = pairs.find((pair) => parameterName(pair) === 'referrer');
  const theirs = (existing === undefined ? '' : parameterValue(existing))
    .split('&')
    .filter((pair) => pair !== '' && parameterName(pair) !== INSTALL_TOKEN_PARAM);
  const theirNames = new Set(theirs.map(parameterName));
  const campaign = Object.entries(params ?? {})
    .filter(([name]) => name.startsWith('utm_') && !theirNames.has(name))
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`);
  const referrer = [...theirs, ...campaign, `${INSTALL_TOKEN_PARAM}=${token}`].join('&');
  const query = [...pairs.filter((pair) => parameterName(pair) !== 'referrer'), `referrer=${encodeURIComponent(referrer)}`];
  return `${path}?${query.join('&')}${hash}`;
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
  // A visit's install token takes its length in a Play URL's referrer.
  const installToken = 'x'.repeat(INSTALL_TOKEN_LENGTH);
  const routes = [
    ...(['android', 'ios', 'desktop'] as const).map((platform) => ({ platform, ipad: false })),
    ...(hasIpadRoute(link) ? [{ platform: 'ios' as const, ipad: true }] : []),
  ];
  for (const { platform, ipad } of routes) {
    const route = routeFor(link, platform, { installToken, ipad });
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
