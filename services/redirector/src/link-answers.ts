import {
  type AppEventPlatform,
  DEFAULT_BRAND_NAME,
  hasIpadRoute,
  INSTALL_TOKEN_PARAM,
  isPreviewCrawler,
  isIpad,
  newInstallToken,
  parseWebUrl,
  type Platform,
  type Route,
  renderAppPage,
  renderPreviewPage,
  routeFor,
  takesInstallToken,
} from '@deeplink/core';
import type { CachedLink } from '@deeplink/core/redis';
import { answerBytes, type Page, page, type Redirect, redirectTo, TYPE } from './responses.js';
import { wire, wireWithSlot } from './wire.js';

/** What a live link answers on one platform, ready to write (see responses.ts). */
export type LinkAnswer =
  | (Redirect & { kind: 'redirect'; store: StoreRedirect })
  /** The iOS "try the app" page, already rendered. */
  | (Page<200> & { kind: 'app-page'; store: StoreRedirect })
  | { kind: 'unavailable' };

/**
 * The platform of the REDIRECT event a visit answered this way records, when the answer sends a
 * visitor without the app to an app store; undefined for every other answer (no event, nothing allocated).
 */
export type StoreRedirect = AppEventPlatform | undefined;

const EVENT_PLATFORM: Record<Platform, AppEventPlatform> = { android: 'ANDROID', ios: 'IOS', desktop: 'DESKTOP' };

/** A cached link's answers: by platform, and the link's extra ones. */
export interface LinkAnswers extends Record<Platform, LinkAnswer | undefined> {
  /** The redirect to where the link sends visitors once expired (its expiredUrl); undefined: the 410 page. */
  expired: Redirect | undefined;
  /** The page link-preview crawlers get (its socialPreview); undefined: they are redirected like people. */
  preview: Page<200> | undefined;
  /** iPads' answer when the link routes them apart (its iosLink's iPad fields); undefined: the ios one. */
  ipad: LinkAnswer | undefined;
  /** The redirect past a capped link's cap (its capOverflowUrl); undefined: the 410 page. */
  overflow: Redirect | undefined;
}

/** No answers: an unknown code's; every slot from the start, so all entries share one object shape. */
export const noAnswers = (): LinkAnswers => ({
  android: undefined,
  ios: undefined,
  desktop: undefined,
  expired: undefined,
  preview: undefined,
  ipad: undefined,
  overflow: undefined,
});

/**
 * Every answer at once, as the link cache keeps them: built when a record enters the cache (a
 * miss, or a changed record), so the cache can weigh each entry by what it really holds.
 * `shortUrl` is the link's own address, which its preview page names as og:url and the iOS page's
 * store button copies (with the visit's install token).
 */
export function buildAnswers(link: CachedLink, shortUrl: string, brand: string = DEFAULT_BRAND_NAME): LinkAnswers {
  const expired = parseWebUrl(link.expiredUrl)?.href;
  const overflow = parseWebUrl(link.capOverflowUrl)?.href;
  const desktop = routeFor(link, 'desktop');
  const preview =
    link.socialPreview && desktop.kind === 'redirect'
      ? renderPreviewPage(link.socialPreview, desktop.location, shortUrl, brand)
      : undefined;
  return {
    android: build(link, 'android', brand, shortUrl),
    ios: build(link, 'ios', brand, shortUrl),
    desktop: build(link, 'desktop', brand, shortUrl),
    expired: expired === undefined ? undefined : redirectTo(wire(expired)),
    preview: preview === undefined ? undefined : page(200, TYPE.html, wire(preview)),
    ipad: hasIpadRoute(link) ? build(link, 'ios', brand, shortUrl, true) : undefined,
    overflow: overflow === undefined ? undefined : redirectTo(wire(overflow)),
  };
}

/** Bytes of prepared answers an entry holds. */
export function answersBytes(answers: LinkAnswers): number {
  let bytes = answerBytes(answers.expired) + answerBytes(answers.preview) + answerBytes(answers.overflow);
  for (const answer of [answers.android, answers.ios, answers.desktop, answers.ipad]) {
    if (answer !== undefined && answer.kind !== 'unavailable') bytes += answerBytes(answer);
  }
  return bytes;
}

/**
 * The answer of a live link for a platform, as buildAnswers prepared it with the link's entry:
 * building one parses URLs and renders pages, which would dominate a redirect's cost. Expiry is
 * the caller's to check, per visit.
 */
export function linkAnswer(answers: LinkAnswers, platform: Platform, userAgent = ''): LinkAnswer {
  // Only links that route iPads apart pay for a second look at the agent.
  if (platform === 'ios' && answers.ipad !== undefined && isIpad(userAgent)) return answers.ipad;
  return answers[platform] ?? UNAVAILABLE;
}

/** Whether a visit with this User-Agent gets the link's preview page: only links with one pay for the crawler test. */
export const getsPreview = (answers: LinkAnswers, userAgent: string): answers is LinkAnswers & { preview: Page<200> } =>
  answers.preview !== undefined && isPreviewCrawler(userAgent);

const UNAVAILABLE: LinkAnswer = { kind: 'unavailable' };

/**
 * One platform's answer. A store answer that hands out install tokens (the Play Store on Android,
 * the App Store button of the iOS page) is prepared with a slot where each visit's token goes:
 * the route is built with a stand-in token, a fresh random one no URL of the link can hold, and
 * the text is cut there into the bytes before and after it.
 */
function build(link: CachedLink, platform: Platform, brand: string, shortUrl: string, ipad = false): LinkAnswer {
  const slot = newInstallToken();
  const route = routeFor(link, platform, { installToken: slot, ipad });
  if (route.kind === 'unavailable') return route;
  const store = storeOf(route, platform);
  if (route.kind === 'app-page') {
    const copyUrl = store !== undefined && takesInstallToken(store) ? `${shortUrl}?${INSTALL_TOKEN_PARAM}=${slot}` : undefined;
    const text = { title: link.socialPreview?.title ?? link.title, appName: link.iosApp?.name, brand, copyUrl };
    return { kind: 'app-page', ...page(200, TYPE.html, withSlot(renderAppPage(route.appUrl, route.fallbackUrl, text), slot)), store };
  }
  return { kind: 'redirect', ...redirectTo(withSlot(route.location, slot)), store };
}

/** `text` for the wire, with a slot where `slot` (the stand-in token) is, when it is there. */
function withSlot(text: string, slot: string) {
  const at = text.indexOf(slot);
  return at === -1 ? wire(text) : wireWithSlot(text.slice(0, at), slot.length, text.slice(at + slot.length));
}

const storeOf = (route: Route & { kind: 'redirect' | 'app-page' }, platform: Platform): StoreRedirect =>
  route.toStore ? EVENT_PLATFORM[platform] : undefined;
