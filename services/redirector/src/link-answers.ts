import type { RecognizedString } from 'uWebSockets.js';
import type { CachedLink } from '@deeplink/core/redis/link-cache';
import { renderAppPage } from '@deeplink/core/routing/pages';
import type { Platform } from '@deeplink/core/routing/platform';
import { routeFor } from '@deeplink/core/routing/resolve-destination';
import { byteLength, wire } from './wire.js';

/** What a live link answers on one platform, ready to write (texts in the form uWebSockets.js takes, see wire.ts). */
export type LinkAnswer =
  | { kind: 'redirect'; location: RecognizedString }
  /** The iOS "try the app" page, already rendered. */
  | { kind: 'app-page'; body: RecognizedString }
  | { kind: 'unavailable' };

/** A cached link's answers by platform, each built the first time that platform visits. */
export type PlatformAnswers = Record<Platform, LinkAnswer | undefined>;

/** No answer built yet; every platform slot from the start, so all entries share one object shape. */
export const noAnswers = (): PlatformAnswers => ({ android: undefined, ios: undefined, desktop: undefined });

/**
 * Every platform's answer at once, as the link cache keeps them: built when a record enters the
 * cache (a miss, or a changed record), so the cache can weigh each entry by what it really holds.
 */
export function buildAnswers(link: CachedLink): PlatformAnswers {
  return { android: build(link, 'android'), ios: build(link, 'ios'), desktop: build(link, 'desktop') };
}

/** Bytes of prepared answers an entry holds. */
export function answersBytes(answers: PlatformAnswers): number {
  let bytes = 0;
  for (const answer of [answers.android, answers.ios, answers.desktop]) {
    if (answer?.kind === 'redirect') bytes += byteLength(answer.location);
    else if (answer?.kind === 'app-page') bytes += byteLength(answer.body);
  }
  return bytes;
}

/**
 * The answer of a live link for a platform, kept in `answers` (which the cache holds beside the
 * record and drops with it). Building one parses URLs and renders pages, which would dominate a
 * redirect's cost. Expiry is the caller's to check, per visit.
 */
export function linkAnswer(link: CachedLink, answers: PlatformAnswers, platform: Platform): LinkAnswer {
  return (answers[platform] ??= build(link, platform));
}

function build(link: CachedLink, platform: Platform): LinkAnswer {
  const route = routeFor(link, platform);
  if (route.kind === 'app-page') return { kind: 'app-page', body: wire(renderAppPage(route.appUrl, route.fallbackUrl)) };
  if (route.kind === 'redirect') return { kind: 'redirect', location: wire(route.location) };
  return route;
}
