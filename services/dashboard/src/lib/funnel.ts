import type { LinkAnalytics } from '@deeplink/client';

type AppEvents = LinkAnalytics['appEvents'];
type Counts = AppEvents['counts'];
export type FunnelPlatform = keyof Counts['CLICK'];

/** The platforms of the funnel's columns, in the order the API names them, with their labels. */
export const FUNNEL_PLATFORMS: readonly { key: FunnelPlatform; label: string }[] = [
  { key: 'ANDROID', label: 'Android' },
  { key: 'IOS', label: 'iOS' },
  { key: 'DESKTOP', label: 'Desktop' },
  { key: 'OTHER', label: 'Other' },
];

/** The funnel's steps, in order; re-opens measure use, not acquisition, and stand apart. */
export const FUNNEL_STEPS = [
  { key: 'CLICK', label: 'Clicks' },
  { key: 'REDIRECT', label: 'Store redirects' },
  { key: 'APP_INSTALL', label: 'Installs' },
  { key: 'APP_FIRST_OPEN', label: 'First opens' },
] as const satisfies readonly { key: keyof Counts; label: string }[];

/** Each step's rate from the step before, as the API names it. */
const STEP_RATES = { REDIRECT: 'redirectPerClick', APP_INSTALL: 'installPerRedirect', APP_FIRST_OPEN: 'firstOpenPerInstall' } as const;

/** A count, and the fraction it is of the same platform's count at the step before (null: nothing to divide by, or the first step). */
export interface FunnelCell {
  count: number;
  rate: number | null;
}

export interface FunnelRow {
  key: (typeof FUNNEL_STEPS)[number]['key'];
  label: string;
  /** Per platform, the rate computed here the way the API computes the total's. */
  platforms: Record<FunnelPlatform, FunnelCell>;
  /** Every platform together: the rate is the API's own `conversion` figure. */
  total: FunnelCell;
}

const sum = (counts: Record<FunnelPlatform, number>) => counts.ANDROID + counts.IOS + counts.DESKTOP + counts.OTHER;
const rate = (part: number, whole: number | undefined) => (whole === undefined || whole === 0 ? null : part / whole);

/** The funnel table: clicks → store redirects → installs → first opens, per platform and in all, with each step's rate. */
export function funnelRows(appEvents: AppEvents): FunnelRow[] {
  return FUNNEL_STEPS.map((step, index) => {
    const counts = appEvents.counts[step.key];
    const before = index === 0 ? undefined : appEvents.counts[FUNNEL_STEPS[index - 1]!.key];
    const platforms = Object.fromEntries(
      FUNNEL_PLATFORMS.map(({ key }) => [key, { count: counts[key], rate: rate(counts[key], before?.[key]) }]),
    ) as Record<FunnelPlatform, FunnelCell>;
    const apiRate = step.key === 'CLICK' ? null : appEvents.conversion[STEP_RATES[step.key]];
    return { key: step.key, label: step.label, platforms, total: { count: sum(counts), rate: apiRate } };
  });
}

/** Re-opens per platform and in all: shown beside the funnel, not in it. */
export function reOpens(appEvents: AppEvents): { platforms: Record<FunnelPlatform, number>; total: number } {
  const counts = appEvents.counts.APP_RE_OPEN;
  return { platforms: counts, total: sum(counts) };
}

/** Every platform's count of an event in the summary's funnel; undefined until the summary is there. */
export function eventTotal(appEvents: AppEvents | undefined, event: keyof Counts): number | undefined {
  return appEvents && sum(appEvents.counts[event]);
}
