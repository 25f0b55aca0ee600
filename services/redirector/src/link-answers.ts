import type { RecognizedString } from 'uws-bundled';
import {
  type AppEventPlatform,
  DEFAULT_BRAND_NAME,
  parseWebUrl,
  type Platform,
  type Route,
  renderAppPage,
  renderPreviewPage,
  routeFor,
} from '@deeplink/core';
import type { CachedLink } from '@deeplink/core/redis';
import { byteLength, wire } from './wire.js';

/** What a live link answers on one platform, ready to write (texts in the form uWebSockets.js takes, see wire.ts). */
export type LinkAnswer =
  | { kind: 'redirect'; location: RecognizedString; store: StoreRedirect }
  /** The iOS "try the app" page, already rendered. */
  | { kind: 'app-page'; body: RecognizedString; store: StoreRedirect }
  | { kind: 'unavailable' };

/**
 * The platform of the REDIRECT event a visit answered this way records, when the answer sends a
 * visitor without the app to an app store; undefined for every other answer (no event, nothing allocated).
 */
export type StoreRedirect = AppEventPlatform | undefined;

const EVENT_PLATFORM: Record<Platform, AppEventPlatform> = { android: 'ANDROID', ios: 'IOS', desktop: 'DESKTOP' };

/** A cached link's answers: by platform, each built the first time that platform visits, and the link's extra ones. */
export interface LinkAnswers extends Record<Platform, LinkAnswer | undefined> {
  /** Where the link sends visitors once expired (its expiredUrl); undefined: the 410 page. */
  expired: RecognizedString | undefined;
  /** The page link-preview crawlers get (its socialPreview); undefined: they are redirected like people. */
  preview: RecognizedString | undefined;
}

/** No answer built yet; every slot from the start, so all entries share one object shape. */
export const noAnswers = (): LinkAnswers => ({
  android: undefined,
  ios: undefined,
  desktop: undefined,
  expired: undefined,
  preview: undefined,
});

/**
 * Every answer at once, as the link cache keeps them: built when a record enters the cache (a
 * miss, or a changed record), so the cache can weigh each entry by what it really holds.
 * `shortUrl` is the link's own address, which its preview page names as og:url.
 */
export function buildAnswers(link: CachedLink, shortUrl: string, brand: string = DEFAULT_BRAND_NAME): LinkAnswers {
  const expired = parseWebUrl(link.expiredUrl)?.href;
  const desktop = routeFor(link, 'desktop');
  const preview =
    link.socialPreview && desktop.kind === 'redirect'
      ? renderPreviewPage(link.socialPreview, desktop.location, shortUrl, brand)
      : undefined;
  return {
    android: build(link, 'android', brand),
    ios: build(link, 'ios', brand),
    desktop: build(link, 'desktop', brand),
    expired: expired === undefined ? undefined : wire(expired),
    preview: preview === undefined ? undefined : wire(preview),
  };
}

/** Bytes of prepared answers an entry holds. */
export function answersBytes(answers: LinkAnswers): number {
  let bytes = 0;
  for (const answer of [answers.android, answers.ios, answers.desktop]) {
    if (answer?.kind === 'redirect') bytes += byteLength(answer.location);
    else if (answer?.kind === 'app-page') bytes += byteLength(answer.body);
  }
  if (answers.expired !== undefined) bytes += byteLength(answers.expired);
  if (answers.preview !== undefined) bytes += byteLength(answers.preview);
  return bytes;
}

/**
 * The answer of a live link for a platform, kept in `answers` (which the cache holds beside the
 * record and drops with it). Building one parses URLs and renders pages, which would dominate a
 * redirect's cost. Expiry is the caller's to check, per visit.
 */
export function linkAnswer(link: CachedLink, answers: LinkAnswers, platform: Platform, brand: string = DEFAULT_BRAND_NAME): LinkAnswer {
  return (answers[platform] ??= build(link, platform, brand));
}

function build(link: CachedLink, platform: Platform, brand: string): LinkAnswer {
  const route = routeFor(link, platform);
  if (route.kind === 'app-page') {
    const text = { title: link.socialPreview?.title ?? link.title, appName: link.iosApp?.name, brand };
    return { kind: 'app-page', body: wire(renderAppPage(route.appUrl, route.fallbackUrl, text)), store: storeOf(route, platform) };
  }
  if (route.kind === 'redirect') return { kind: 'redirect', location: wire(route.location), store: storeOf(route, platform) };
  return route;
}

const storeOf = (route: Route & { kind: 'redirect' | 'app-page' }, platform: Platform): StoreRedirect =>
  route.toStore ? EVENT_PLATFORM[platform] : undefined;
