import { describe, expect, it } from 'vitest';
import { funnelSeriesData, timeColumns } from '../src/lib/chart-data.js';
import { eventTotal, FUNNEL_STEPS, funnelRows, reOpens } from '../src/lib/funnel.js';

const platforms = (counts: Partial<Record<'ANDROID' | 'IOS' | 'DESKTOP' | 'OTHER', number>>) => ({
  ANDROID: 0,
  IOS: 0,
  DESKTOP: 0,
  OTHER: 0,
  ...counts,
});

/** A report's appEvents as the API sends them, its rates the API's (computed over every platform). */
const appEvents = {
  counts: {
    CLICK: platforms({ ANDROID: 600, IOS: 400, DESKTOP: 200 }),
    REDIRECT: platforms({ ANDROID: 300, IOS: 100 }),
    APP_INSTALL: platforms({ ANDROID: 150, IOS: 0 }),
    APP_FIRST_OPEN: platforms({ ANDROID: 120, IOS: 10, OTHER: 3 }),
    APP_RE_OPEN: platforms({ ANDROID: 340, IOS: 210 }),
  },
  conversion: {
    redirectPerClick: 400 / 1200,
    installPerRedirect: 150 / 400,
    firstOpenPerInstall: 133 / 150,
    firstOpenPerClick: 133 / 1200,
  },
  uniques: {
    REDIRECT: platforms({ ANDROID: 250, IOS: 90 }),
    APP_INSTALL: platforms({ ANDROID: 150 }),
    APP_FIRST_OPEN: platforms({ ANDROID: 120, IOS: 10, OTHER: 3 }),
    APP_RE_OPEN: platforms({ ANDROID: 90, IOS: 60 }),
  },
};

describe('the app funnel', () => {
  it('lists clicks, store redirects, installs and first opens in order, re-opens left out', () => {
    const rows = funnelRows(appEvents);
    expect(rows.map((row) => row.label)).toEqual(['Clicks', 'Store redirects', 'Installs', 'First opens']);
    expect(rows.map((row) => row.key)).toEqual(FUNNEL_STEPS.map((step) => step.key));
    expect(rows.map((row) => row.total.count)).toEqual([1200, 400, 150, 133]);
  });

  it("gives each platform its rate from the step before, null where that step had none, and the API's rate for all platforms", () => {
    const [clicks, redirects, installs, firstOpens] = funnelRows(appEvents);
    expect(clicks!.platforms.ANDROID).toEqual({ count: 600, rate: null });
    expect(clicks!.total).toEqual({ count: 1200, rate: null });
    expect(redirects!.platforms.ANDROID).toEqual({ count: 300, rate: 0.5 });
    expect(redirects!.platforms.IOS).toEqual({ count: 100, rate: 0.25 });
    expect(redirects!.platforms.DESKTOP).toEqual({ count: 0, rate: 0 });
    expect(redirects!.platforms.OTHER).toEqual({ count: 0, rate: null });
    expect(redirects!.total.rate).toBe(appEvents.conversion.redirectPerClick);
    expect(installs!.platforms.IOS).toEqual({ count: 0, rate: 0 });
    expect(installs!.total.rate).toBe(appEvents.conversion.installPerRedirect);
    // First opens without an install on that platform: nothing to divide by.
    expect(firstOpens!.platforms.IOS).toEqual({ count: 10, rate: null });
    expect(firstOpens!.platforms.ANDROID).toEqual({ count: 120, rate: 0.8 });
    expect(firstOpens!.total.rate).toBe(appEvents.conversion.firstOpenPerInstall);
  });

  it('keeps re-opens apart, and sums the summary’s events over every platform', () => {
    expect(reOpens(appEvents)).toEqual({ platforms: platforms({ ANDROID: 340, IOS: 210 }), total: 550 });
    expect(eventTotal(appEvents, 'APP_INSTALL')).toBe(150);
    expect(eventTotal(appEvents, 'APP_FIRST_OPEN')).toBe(133);
    expect(eventTotal(undefined, 'APP_RE_OPEN')).toBeUndefined();
  });

  it('turns the time series into uPlot columns: Unix seconds, clicks, store redirects, installs, first opens', () => {
    const none = { REDIRECT: 0, APP_INSTALL: 0, APP_FIRST_OPEN: 0, APP_RE_OPEN: 0 };
    const events = { ...none, uniques: none };
    const busy = {
      REDIRECT: 4,
      APP_INSTALL: 2,
      APP_FIRST_OPEN: 1,
      APP_RE_OPEN: 7,
      uniques: { REDIRECT: 3, APP_INSTALL: 2, APP_FIRST_OPEN: 1, APP_RE_OPEN: 2 },
    };
    const [xs, clicks, redirects, installs, firstOpens, ...rest] = funnelSeriesData([
      { date: '2026-01-01T00:00:00.000Z', clicks: 9, appEvents: busy },
      { date: '2026-01-02T00:00:00.000Z', clicks: 0, appEvents: events },
    ]);
    expect([...xs!]).toEqual([1767225600, 1767312000]);
    expect([clicks, redirects, installs, firstOpens].map((column) => [...column!])).toEqual([
      [9, 0],
      [4, 0],
      [2, 0],
      [1, 0],
    ]);
    // Re-opens are no series of the funnel's chart.
    expect(rest).toEqual([]);
    expect(timeColumns([], [(point: { date: string }) => point.date.length])).toEqual([new Float64Array(0), new Float64Array(0)]);
  });
});
