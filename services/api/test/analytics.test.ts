import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RollupClick, RollupPreview } from '@deeplink/core/db';
import { ANDROID_CHROME, recordClicks, rollupClick as click, rollupPreview } from '@deeplink/test-kit/rollups';
import { BROWSER_AGENTS } from '@deeplink/test-kit/user-agents';
import { createApiHarness, type ApiHarness } from './harness.js';

let api: ApiHarness;
let owner: { id: string; token: string };
let stranger: { id: string; token: string };

beforeAll(async () => {
  api = await createApiHarness();
  owner = await api.registerUser('Analyst');
  stranger = await api.registerUser('Stranger');
});
afterAll(async () => {
  await api?.close();
});

const record = (clicks: RollupClick[], previews?: RollupPreview[]) => recordClicks(api.env.sql, clicks, previews);

async function createLink(token = owner.token, title = 'Campaign'): Promise<string> {
  const response = await api.request({ method: 'POST', url: '/api/links', token, payload: { title, defaultUrl: 'https://example.com' } });
  if (response.statusCode !== 201) throw new Error(`create failed: ${response.body}`);
  return response.json().data.link.id;
}

const analyticsUrl = (id: string, query: Record<string, string> = {}) =>
  `/api/analytics/links/${id}?${new URLSearchParams(query).toString()}`;

async function report(id: string, query: Record<string, string> = {}) {
  const response = await api.request({ method: 'GET', url: analyticsUrl(id, query), token: owner.token });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data.analytics;
}

const series = (analytics: { timeSeries: { date: string; clicks: number }[] }) =>
  Object.fromEntries(analytics.timeSeries.map(({ date, clicks }) => [date, clicks]));

/** The app events of a time series bucket that had none. */
const NONE_PER_EVENT = { REDIRECT: 0, APP_INSTALL: 0, APP_FIRST_OPEN: 0, APP_RE_OPEN: 0 };
/** A bucket without app events: every event 0, and so are its uniques. */
const NO_EVENTS = { ...NONE_PER_EVENT, uniques: NONE_PER_EVENT };

/** The app funnel of a report whose only app figures are its clicks per platform. */
const clicksOnlyFunnel = (clicks: { ANDROID?: number; IOS?: number; DESKTOP?: number }) => {
  const none = { ANDROID: 0, IOS: 0, DESKTOP: 0, OTHER: 0 };
  const total = (clicks.ANDROID ?? 0) + (clicks.IOS ?? 0) + (clicks.DESKTOP ?? 0);
  return {
    counts: { CLICK: { ...none, ...clicks }, REDIRECT: none, APP_INSTALL: none, APP_FIRST_OPEN: none, APP_RE_OPEN: none },
    conversion: {
      redirectPerClick: total === 0 ? null : 0,
      installPerRedirect: null,
      firstOpenPerInstall: null,
      firstOpenPerClick: total === 0 ? null : 0,
    },
    uniques: { REDIRECT: none, APP_INSTALL: none, APP_FIRST_OPEN: none, APP_RE_OPEN: none },
  };
};

const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

describe('GET /api/analytics/links/:id', () => {
  it('zero-fills an empty range and reports totals of 0', async () => {
    const id = await createLink();
    const analytics = await report(id, { startDate: '2026-03-01', endDate: '2026-03-03' });
    expect(analytics).toEqual({
      totalClicks: 0,
      uniqueClicks: 0,
      previews: 0,
      platforms: { android: 0, ios: 0, desktop: 0 },
      countries: {},
      browsers: {},
      os: {},
      devices: { Mobile: 0, Desktop: 0 },
      referrers: {},
      timeSeries: [
        { date: '2026-03-01T00:00:00.000Z', clicks: 0, uniqueClicks: 0, appEvents: NO_EVENTS },
        { date: '2026-03-02T00:00:00.000Z', clicks: 0, uniqueClicks: 0, appEvents: NO_EVENTS },
        { date: '2026-03-03T00:00:00.000Z', clicks: 0, uniqueClicks: 0, appEvents: NO_EVENTS },
      ],
      range: { startDate: '2026-03-01T00:00:00.000Z', endDate: '2026-03-04T00:00:00.000Z', timeBucket: 'day' },
      appEvents: clicksOnlyFunnel({}),
      appEventsFiltered: true,
    });
  });

  it('reports a single click in every breakdown and in its bucket', async () => {
    const id = await createLink();
    await record(
      [click(id, '2026-03-02T10:15:00Z', { ...ANDROID_CHROME, referrer: 'news.example.org' })],
      // A link-preview crawler's visit: a preview, in no click figure.
      [rollupPreview(id, '2026-03-02T10:16:00Z')],
    );
    const analytics = await report(id, { startDate: '2026-03-01', endDate: '2026-03-03' });
    expect(analytics).toEqual({
      totalClicks: 1,
      uniqueClicks: 1,
      previews: 1,
      platforms: { android: 1, ios: 0, desktop: 0 },
      countries: { US: 1 },
      browsers: { Chrome: 1 },
      os: { Android: 1 },
      devices: { Mobile: 1, Desktop: 0 },
      referrers: { 'news.example.org': 1 },
      timeSeries: [
        { date: '2026-03-01T00:00:00.000Z', clicks: 0, uniqueClicks: 0, appEvents: NO_EVENTS },
        { date: '2026-03-02T00:00:00.000Z', clicks: 1, uniqueClicks: 1, appEvents: NO_EVENTS },
        { date: '2026-03-03T00:00:00.000Z', clicks: 0, uniqueClicks: 0, appEvents: NO_EVENTS },
      ],
      range: { startDate: '2026-03-01T00:00:00.000Z', endDate: '2026-03-04T00:00:00.000Z', timeBucket: 'day' },
      appEvents: clicksOnlyFunnel({ ANDROID: 1 }),
      appEventsFiltered: true,
    });
    const outside = await report(id, { startDate: '2026-03-03', endDate: '2026-03-05' });
    expect(outside.totalClicks).toBe(0);
  });

  it('puts 23:59:59.999 and 00:00 UTC in different days and hours', async () => {
    const id = await createLink();
    await record([click(id, '2026-03-01T23:59:59.999Z'), click(id, '2026-03-02T00:00:00.000Z')]);

    const byDay = await report(id, { startDate: '2026-03-01', endDate: '2026-03-02' });
    expect(series(byDay)).toEqual({ '2026-03-01T00:00:00.000Z': 1, '2026-03-02T00:00:00.000Z': 1 });

    const byHour = await report(id, { startDate: '2026-03-01T23:00:00Z', endDate: '2026-03-02T00:30:00Z', timeBucket: 'hour' });
    expect(series(byHour)).toEqual({ '2026-03-01T23:00:00.000Z': 1, '2026-03-02T00:00:00.000Z': 1 });

    // A bare endDate includes its whole day; a bare startDate starts at midnight.
    expect((await report(id, { startDate: '2026-03-01', endDate: '2026-03-01' })).totalClicks).toBe(1);
    expect((await report(id, { startDate: '2026-03-02', endDate: '2026-03-02' })).totalClicks).toBe(1);
    // Date-times with an offset: 01:00+01:00 is midnight UTC.
    expect((await report(id, { startDate: '2026-03-02T01:00:00+01:00', endDate: '2026-03-02T05:00:00+01:00' })).totalClicks).toBe(1);
  });

  it('starts ISO weeks on Monday: a Sunday and the Monday after are in different weeks', async () => {
    const id = await createLink();
    await record([
      click(id, '2026-03-02T00:30:00Z'), // Monday, before the range starts
      click(id, '2026-03-08T23:30:00Z'), // Sunday
      click(id, '2026-03-09T00:10:00Z'), // the Monday after
      click(id, '2026-12-31T12:00:00Z'), // Thursday of the week of Monday 2026-12-28
      click(id, '2027-01-03T12:00:00Z'), // Sunday, same ISO week across the new year
      click(id, '2027-01-04T00:00:00Z'), // Monday, next week
    ]);
    const march = await report(id, { startDate: '2026-03-04', endDate: '2026-03-10', timeBucket: 'week' });
    // The first bucket starts on the Monday before the range but counts only clicks inside it.
    expect(march.timeSeries).toEqual([
      { date: '2026-03-02T00:00:00.000Z', clicks: 1, uniqueClicks: 1, appEvents: NO_EVENTS },
      { date: '2026-03-09T00:00:00.000Z', clicks: 1, uniqueClicks: 1, appEvents: NO_EVENTS },
    ]);
    expect(march.range.startDate).toBe('2026-03-04T00:00:00.000Z');
    const newYear = await report(id, { startDate: '2026-12-28', endDate: '2027-01-10', timeBucket: 'week' });
    expect(newYear.timeSeries).toEqual([
      { date: '2026-12-28T00:00:00.000Z', clicks: 2, uniqueClicks: 1, appEvents: NO_EVENTS },
      { date: '2027-01-04T00:00:00.000Z', clicks: 1, uniqueClicks: 1, appEvents: NO_EVENTS },
    ]);
  });

  it('ends months on the last day, February included, in leap years too', async () => {
    const id = await createLink();
    await record([
      click(id, '2026-01-31T23:59:59.999Z'),
      click(id, '2026-02-01T00:00:00.000Z'),
      click(id, '2026-02-28T23:00:00.000Z'),
      click(id, '2026-03-01T00:00:00.000Z'),
      click(id, '2024-02-29T12:00:00.000Z'),
      click(id, '2024-03-01T00:00:00.000Z'),
    ]);
    const months = await report(id, { startDate: '2026-01-01', endDate: '2026-03-31', timeBucket: 'month' });
    expect(months.timeSeries).toEqual([
      { date: '2026-01-01T00:00:00.000Z', clicks: 1, uniqueClicks: 1, appEvents: NO_EVENTS },
      { date: '2026-02-01T00:00:00.000Z', clicks: 2, uniqueClicks: 1, appEvents: NO_EVENTS },
      { date: '2026-03-01T00:00:00.000Z', clicks: 1, uniqueClicks: 1, appEvents: NO_EVENTS },
    ]);
    const leap = await report(id, { startDate: '2024-02-01', endDate: '2024-03-31', timeBucket: 'month' });
    expect(series(leap)).toEqual({ '2024-02-01T00:00:00.000Z': 1, '2024-03-01T00:00:00.000Z': 1 });
    const leapDays = await report(id, { startDate: '2024-02-28', endDate: '2024-03-01' });
    expect(series(leapDays)).toEqual({ '2024-02-28T00:00:00.000Z': 0, '2024-02-29T00:00:00.000Z': 1, '2024-03-01T00:00:00.000Z': 1 });
    const february2026 = await report(id, { startDate: '2026-02-28', endDate: '2026-03-01' });
    expect(series(february2026)).toEqual({ '2026-02-28T00:00:00.000Z': 1, '2026-03-01T00:00:00.000Z': 1 });
  });

  it('counts a returning visitor once over the whole range and once on each day', async () => {
    const id = await createLink();
    const days = ['2026-04-06', '2026-04-07', '2026-04-08'];
    await record([
      ...days.flatMap((day) => [click(id, `${day}T09:00:00Z`), click(id, `${day}T18:30:00Z`)]),
      click(id, '2026-04-07T12:00:00Z', { visitor: 'second' }),
      click(id, '2026-04-07T12:05:00Z', { visitor: 'third' }),
    ]);
    const whole = await report(id, { startDate: '2026-04-06', endDate: '2026-04-08' });
    expect(whole.totalClicks).toBe(8);
    expect(whole.uniqueClicks).toBe(3);
    const perDay = [];
    for (const day of days) perDay.push((await report(id, { startDate: day, endDate: day })).uniqueClicks);
    expect(perDay).toEqual([1, 3, 1]);
    // Merged sketches, not a sum of per-day uniques (5).
    expect(whole.uniqueClicks).toBeLessThan(perDay.reduce((a, b) => a + b, 0));
  });

  it('keeps the top 10 browsers and referrers and folds the rest into Other', async () => {
    const id = await createLink();
    const names = Object.keys(BROWSER_AGENTS);
    expect(names).toHaveLength(12);
    // Browser i gets 12 - i clicks from referrer site-i, so the last two of each are folded.
    const clicks = names.flatMap((name, i) =>
      Array.from({ length: 12 - i }, (_, n) =>
        click(id, Date.UTC(2026, 4, 1, i, n), { browser: name, referrer: `site-${String(i).padStart(2, '0')}.example` }),
      ),
    );
    await record(clicks);
    const analytics = await report(id, { startDate: '2026-05-01', endDate: '2026-05-01' });
    expect(analytics.totalClicks).toBe(78);
    expect(analytics.browsers).toEqual({
      ...Object.fromEntries(names.slice(0, 10).map((name, i) => [name, 12 - i])),
      Other: 2 + 1,
    });
    expect(Object.keys(analytics.referrers)).toHaveLength(11);
    expect(analytics.referrers).toMatchObject({ 'site-00.example': 12, 'site-09.example': 3, Other: 3 });
    for (const breakdown of ['platforms', 'countries', 'browsers', 'devices', 'referrers']) {
      expect(sum(analytics[breakdown]), breakdown).toBe(78);
    }
    expect(sum(series(analytics))).toBe(78);
  });

  it('reflects new clicks in every number on the next call', async () => {
    const id = await createLink();
    const query = { startDate: '2026-06-01', endDate: '2026-06-30' };
    await record([click(id, '2026-06-10T10:00:00Z')]);
    expect(await report(id, query)).toMatchObject({ totalClicks: 1, browsers: { Chrome: 1 }, referrers: { direct: 1 } });
    expect(await report(id, query)).toMatchObject({ totalClicks: 1, browsers: { Chrome: 1 } });
    // Same hour and a new one, new values: the breakdown must not be served from the earlier call.
    await record([
      click(id, '2026-06-10T10:30:00Z', { browser: 'Firefox', referrer: 't.co', visitor: 'second' }),
      click(id, '2026-06-20T08:00:00Z', { browser: 'Edge', visitor: 'third' }),
    ]);
    const after = await report(id, query);
    expect(after).toMatchObject({
      totalClicks: 3,
      uniqueClicks: 3,
      browsers: { Chrome: 1, Firefox: 1, Edge: 1 },
      referrers: { direct: 2, 't.co': 1 },
    });
    // A narrower range is its own report, not the wider one's breakdown.
    expect((await report(id, { startDate: '2026-06-20', endDate: '2026-06-20' })).browsers).toEqual({ Edge: 1 });
  });

  it('defaults to the 30 UTC days ending today, by day', async () => {
    const id = await createLink();
    const now = Date.now();
    await record([click(id, now), click(id, now - 30 * 86_400_000)]);
    const analytics = await report(id);
    const tomorrow = new Date(now);
    tomorrow.setUTCHours(24, 0, 0, 0);
    expect(analytics.range).toEqual({
      startDate: new Date(tomorrow.getTime() - 30 * 86_400_000).toISOString(),
      endDate: tomorrow.toISOString(),
      timeBucket: 'day',
    });
    expect(analytics.timeSeries).toHaveLength(30);
    expect(analytics.totalClicks).toBe(1);
    expect(analytics.timeSeries.at(-1).clicks).toBe(1);
  });

  it('answers a one-year hourly report with 8760 buckets and accepts up to 10,000', async () => {
    const id = await createLink();
    await record([click(id, '2025-07-01T05:30:00Z')]);
    const year = await report(id, { startDate: '2025-01-01', endDate: '2025-12-31', timeBucket: 'hour' });
    expect(year.timeSeries).toHaveLength(8760);
    expect(year.totalClicks).toBe(1);
    expect(year.timeSeries.find((point: { clicks: number }) => point.clicks > 0)).toEqual({
      date: '2025-07-01T05:00:00.000Z',
      clicks: 1,
      uniqueClicks: 1,
      appEvents: NO_EVENTS,
    });
    const max = await report(id, {
      startDate: '2025-01-01T00:00:00Z',
      endDate: new Date(Date.UTC(2025, 0, 1) + 10_000 * 3_600_000 - 1).toISOString(),
      timeBucket: 'hour',
    });
    expect(max.timeSeries).toHaveLength(10_000);
  });

  it.each([
    [{ timeBucket: 'minute' }, 'timeBucket'],
    [{ startDate: 'yesterday' }, 'startDate'],
    [{ startDate: '2023-02-29' }, 'startDate'],
    [{ endDate: '2026-13-01' }, 'endDate'],
    [{ endDate: '2026-03-01T10:00:00' }, 'endDate'],
    [{ startDate: '2026-03-02', endDate: '2026-03-01' }, 'startDate'],
    [{ startDate: '2026-03-01T10:30:00Z', endDate: '2026-03-01T10:15:00Z' }, 'startDate'],
    [{ startDate: '2100-01-01' }, 'startDate'],
    [{ startDate: '9999-12-01', endDate: '9999-12-31' }, 'endDate'],
    [{ startDate: '2024-01-01', endDate: '2025-12-31', timeBucket: 'hour' }, 'timeBucket'],
    [{ startDate: '2025-01-01T00:00:00Z', endDate: '2026-02-21T16:00:00Z', timeBucket: 'hour' }, 'timeBucket'],
    [{ startDate: '0001-01-01', endDate: '2026-01-01', timeBucket: 'month' }, 'timeBucket'],
    [{ bucket: 'day' }, 'bucket'],
  ])('refuses %o with 400 INVALID_REQUEST naming %s', async (query, field) => {
    const id = await createLink();
    const response = await api.request({ method: 'GET', url: analyticsUrl(id, query), token: owner.token });
    expect(response.statusCode).toBe(400);
    const { error } = response.json();
    expect(error.code).toBe('INVALID_REQUEST');
    expect(error.details.map((detail: { field: string }) => detail.field)).toEqual([field]);
  });

  it("answers 403 for another account's link, 404 for unknown ids and 401 without credentials", async () => {
    const theirs = await createLink(stranger.token);
    const forbidden = await api.request({ method: 'GET', url: analyticsUrl(theirs), token: owner.token });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json().error.code).toBe('FORBIDDEN');
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const missing = await api.request({ method: 'GET', url: analyticsUrl(id), token: owner.token });
      expect(missing.statusCode).toBe(404);
      expect(missing.json().error.code).toBe('NOT_FOUND');
    }
    const anonymous = await api.request({ method: 'GET', url: analyticsUrl(theirs) });
    expect(anonymous.statusCode).toBe(401);
  });
});

describe('GET /api/analytics/summary', () => {
  const summary = async (token: string, breakdowns?: 'true' | 'false') => {
    const url = breakdowns ? `/api/analytics/summary?breakdowns=${breakdowns}` : '/api/analytics/summary';
    const response = await api.request({ method: 'GET', url, token });
    expect(response.statusCode, response.body).toBe(200);
    return response.json().data.summary;
  };
  const setExpiry = async (token: string, id: string, expirationDate: string | null) => {
    const response = await api.request({ method: 'PUT', url: `/api/links/${id}`, token, payload: { expirationDate } });
    expect(response.statusCode, response.body).toBe(200);
  };

  it('follows links as they are created, clicked, expire and are deleted, for the caller only', async () => {
    const user = await api.registerUser('Summary');
    // appEventsFiltered: no filters, so the app events are the clicks' own.
    expect(await summary(user.token)).toEqual({ totalLinks: 0, totalClicks: 0, activeLinks: 0, topLinks: [], appEventsFiltered: true });
    expect(await summary(user.token, 'true')).toEqual({
      totalLinks: 0,
      totalClicks: 0,
      activeLinks: 0,
      topLinks: [],
      appEventsFiltered: true,
      platforms: { android: 0, ios: 0, desktop: 0 },
      countries: {},
      browsers: {},
      os: {},
      devices: { Mobile: 0, Desktop: 0 },
      referrers: {},
      appEvents: clicksOnlyFunnel({}),
    });

    const ids: Record<string, string> = {};
    // Created in reverse order, so a tie broken by anything but the title would show.
    for (const title of ['golf', 'foxtrot', 'echo', 'delta', 'charlie', 'bravo', 'alpha']) ids[title] = await createLink(user.token, title);
    const clicksPer = { alpha: 5, bravo: 3, charlie: 3, delta: 7, echo: 1, foxtrot: 2, golf: 0 };
    await record(
      Object.entries(clicksPer).flatMap(([title, n]) =>
        Array.from({ length: n }, (_, i) => click(ids[title]!, Date.UTC(2025, 0, 1 + i * 40))),
      ),
    );
    await record([click(await createLink(stranger.token, 'not mine'), Date.UTC(2025, 0, 1))]);

    expect(await summary(user.token, 'true')).toEqual({
      totalLinks: 7,
      totalClicks: 21,
      activeLinks: 7,
      // bravo and charlie tie at 3: ordered by title.
      topLinks: [
        { id: ids.delta, title: 'delta', clicks: 7 },
        { id: ids.alpha, title: 'alpha', clicks: 5 },
        { id: ids.bravo, title: 'bravo', clicks: 3 },
        { id: ids.charlie, title: 'charlie', clicks: 3 },
        { id: ids.foxtrot, title: 'foxtrot', clicks: 2 },
      ],
      // Every click is DEFAULT_CLICK's (desktop Chrome on Windows from the US, direct); the stranger's is not here.
      platforms: { android: 0, ios: 0, desktop: 21 },
      countries: { US: 21 },
      browsers: { Chrome: 21 },
      os: { Windows: 21 },
      devices: { Mobile: 0, Desktop: 21 },
      referrers: { direct: 21 },
      appEvents: clicksOnlyFunnel({ DESKTOP: 21 }),
      appEventsFiltered: true,
    });

    await setExpiry(user.token, ids.bravo!, '2020-01-01');
    await setExpiry(user.token, ids.echo!, new Date(Date.now() - 1000).toISOString());
    await setExpiry(user.token, ids.golf!, '2999-01-01');
    expect(await summary(user.token)).toMatchObject({ totalLinks: 7, totalClicks: 21, activeLinks: 5 });
    await setExpiry(user.token, ids.bravo!, null);
    expect((await summary(user.token)).activeLinks).toBe(6);

    const deleted = await api.request({ method: 'DELETE', url: `/api/links/${ids.delta}`, token: user.token });
    expect(deleted.statusCode).toBe(200);
    const after = await summary(user.token);
    expect(after).toMatchObject({ totalLinks: 6, totalClicks: 14, activeLinks: 5 });
    expect(after).not.toHaveProperty('os');
    expect(await summary(user.token, 'false')).toEqual(after);
    expect((await summary(user.token, 'true')).os).toEqual({ Windows: 14 });
    expect(after.topLinks.map((link: { title: string }) => link.title)).toEqual(['alpha', 'bravo', 'charlie', 'foxtrot', 'echo']);
  });

  it('needs credentials', async () => {
    const response = await api.request({ method: 'GET', url: '/api/analytics/summary' });
    expect(response.statusCode).toBe(401);
    expect(response.json().error.code).toBe('UNAUTHORIZED');
  });
});
