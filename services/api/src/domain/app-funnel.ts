import {
  APP_EVENT_NAMES,
  type AppEventName,
  type AppEventPlatform,
  type AppEvents,
  isAppEventName,
  isAppEventPlatform,
} from '@deeplink/core';
import type { AppEventTotal, DimensionTotal } from '@deeplink/core/db';

type PerPlatform = Record<AppEventPlatform, number>;

const zeros = (): PerPlatform => ({ ANDROID: 0, IOS: 0, DESKTOP: 0, OTHER: 0 });
const sum = (counts: PerPlatform) => counts.ANDROID + counts.IOS + counts.DESKTOP + counts.OTHER;
const rate = (part: number, whole: number): number | null => (whole === 0 ? null : part / whole);

/** The click platforms (the platform dimension's values) as app event platforms. */
const CLICK_PLATFORMS: Readonly<Record<string, AppEventPlatform>> = { android: 'ANDROID', ios: 'IOS', desktop: 'DESKTOP' };

/**
 * The app funnel of a report: its clicks per platform (from the platform breakdown's rows) beside
 * the app events per platform, the conversion from each step to the next, and the distinct
 * visitors (installs, opens) behind each event per platform.
 */
export function appFunnel(dimensions: readonly DimensionTotal[], events: readonly AppEventTotal[]): AppEvents {
  const counts = { CLICK: zeros(), ...Object.fromEntries(APP_EVENT_NAMES.map((name) => [name, zeros()])) } as AppEvents['counts'];
  const uniques = Object.fromEntries(APP_EVENT_NAMES.map((name) => [name, zeros()])) as AppEvents['uniques'];
  for (const row of dimensions) {
    const platform = row.dimension === 'platform' ? CLICK_PLATFORMS[row.value] : undefined;
    if (platform) counts.CLICK[platform] += row.clicks;
  }
  for (const { event, platform, count, uniques: distinct } of events) {
    // The worker writes only known names and platforms; anything else is not shown.
    if (!isAppEventName(event) || !isAppEventPlatform(platform)) continue;
    counts[event][platform] += count;
    // One row per event and platform: its sketches were merged in SQL, so this is that number, not a sum.
    uniques[event][platform] = distinct;
  }
  const clicks = sum(counts.CLICK);
  const redirects = sum(counts.REDIRECT);
  const installs = sum(counts.APP_INSTALL);
  const firstOpens = sum(counts.APP_FIRST_OPEN);
  return {
    counts,
    uniques,
    conversion: {
      redirectPerClick: rate(redirects, clicks),
      installPerRedirect: rate(installs, redirects),
      firstOpenPerInstall: rate(firstOpens, installs),
      firstOpenPerClick: rate(firstOpens, clicks),
    },
  };
}

/** The app events of one time series bucket: each event over every platform, and its distinct visitors. */
export type BucketEvents = Record<AppEventName, number> & { uniques: Record<AppEventName, number> };

/**
 * A bucket's app events before any is counted: every event present, 0. A literal, made once per
 * bucket (8,760 for a year by hour); its type makes a new event name a compile error here.
 */
export const noBucketEvents = (): BucketEvents => ({
  REDIRECT: 0,
  APP_INSTALL: 0,
  APP_FIRST_OPEN: 0,
  APP_RE_OPEN: 0,
  uniques: { REDIRECT: 0, APP_INSTALL: 0, APP_FIRST_OPEN: 0, APP_RE_OPEN: 0 },
});
