import type { RecognizedString } from 'uWebSockets.js';
import type { CachedLink } from '@deeplink/core/redis/link-cache';
import { renderAppPage } from '@deeplink/core/routing/pages';
import type { Platform } from '@deeplink/core/routing/platform';
import { routeFor } from '@deeplink/core/routing/resolve-destination';
import { wire } from './wire.js';

/** What a live link answers on one platform, ready to write: texts already in the form uWebSockets.js writes (see wire.ts). */
export type LinkAnswer =
  | { kind: 'redirect'; location: RecognizedString }
  /** The iOS "try the app" page, already rendered. */
  | { kind: 'app-page'; body: RecognizedString }
  | { kind: 'unavailable' };

/**
 * Answers per cached record and platform. Building one parses URLs and renders pages, which would
 * dominate a redirect's cost; a record is replaced (never changed) when its link changes, so an
 * answer lives exactly as long as the record it came from, and the WeakMap lets both go together.
 */
const answersByLink = new WeakMap<CachedLink, Partial<Record<Platform, LinkAnswer>>>();

/** The answer of a live link for a platform; expiry is the caller's to check, per visit. */
export function linkAnswer(link: CachedLink, platform: Platform): LinkAnswer {
  let answers = answersByLink.get(link);
  if (answers === undefined) {
    // Every platform slot from the start: one object shape for all links keeps the lookup fast.
    answers = { android: undefined, ios: undefined, desktop: undefined };
    answersByLink.set(link, answers);
  }
  return (answers[platform] ??= build(link, platform));
}

function build(link: CachedLink, platform: Platform): LinkAnswer {
  const route = routeFor(link, platform);
  if (route.kind === 'app-page') return { kind: 'app-page', body: wire(renderAppPage(route.appUrl, route.fallbackUrl)) };
  if (route.kind === 'redirect') return { kind: 'redirect', location: wire(route.location) };
  return route;
}
