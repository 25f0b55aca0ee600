// The app funnel over time and in the exports: app events written by the worker's rollup writer
// (the repository the worker commits its batches with) into the hourly and daily app event rollups,
// read back through the link report's timeSeries and both export layouts, in UTC and in other zones,
// with the distinct visitors behind each event, per bucket and over the range.
import { randomUUID } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_EVENT_NAMES, type AppEventName, type AppEventPlatform } from '@deeplink/core';
import { rollupsRepository, type RollupAppEvent } from '@deeplink/core/db';
import { ANDROID_CHROME, IPHONE_SAFARI, recordClicks, rollupClick as click } from '@deeplink/test-kit/rollups';
import { createApiHarness, type ApiHarness } from './harness.js';

let api: ApiHarness;
let token: string;
let linkId: string;
let quietId: string;

type EventCounts = Record<AppEventName, number>;
type BucketEvents = EventCounts & { uniques: EventCounts };
interface Bucket {
  date: string;
  clicks: number;
  uniqueClicks: number;
  appEvents: BucketEvents;
}
interface Report {
  totalClicks: number;
  timeSeries: Bucket[];
  appEvents: {
    counts: Record<'CLICK' | AppEventName, Record<AppEventPlatform, number>>;
    uniques: Record<AppEventName, Record<AppEventPlatform, number>>;
  };
}

type Event = [at: string, name: AppEventName, platform: AppEventPlatform, visitor?: string];
const event = (...values: Event): Event => values;

/** An event as the worker rolls it up: in its UTC hour, as its visitor, or one of its own (`event-<i>`). */
const rollupEvent = ([at, name, platform, visitor]: Event, i: number, link = linkId): RollupAppEvent => ({
  linkId: link,
  bucket: Math.floor(Date.parse(at) / 3_600_000) * 3_600_000,
  name,
  platform,
  visitor: visitor ?? `event-${i}`,
});

/**
 * Around the end of March 2026: Paris moves its clocks forward on the night of the 28th to the
 * 29th (UTC+1 → UTC+2), so its 29 March lasts 23 hours and its days start at 23:00 UTC before it and
 * 22:00 UTC after it. Events sit on either side of those local midnights.
 */
const EVENTS: Event[] = [
  event('2026-03-27T09:15:00Z', 'REDIRECT', 'ANDROID'),
  event('2026-03-27T09:40:00Z', 'REDIRECT', 'ANDROID'),
  event('2026-03-27T10:00:00Z', 'REDIRECT', 'IOS'),
  event('2026-03-27T12:00:00Z', 'APP_INSTALL', 'ANDROID'),
  event('2026-03-27T13:00:00Z', 'APP_FIRST_OPEN', 'ANDROID'),
  // 28 March 23:30 UTC: still the 28th in UTC, already the 29th in Paris (00:30 CET).
  event('2026-03-28T23:30:00Z', 'REDIRECT', 'IOS'),
  event('2026-03-28T23:45:00Z', 'APP_INSTALL', 'IOS'),
  // 29 March 22:30 UTC: the 29th in UTC, the 30th in Paris (00:30 CEST).
  event('2026-03-29T22:30:00Z', 'APP_FIRST_OPEN', 'IOS'),
  event('2026-03-29T22:31:00Z', 'APP_RE_OPEN', 'IOS'),
  event('2026-03-30T08:00:00Z', 'APP_RE_OPEN', 'ANDROID'),
  event('2026-03-30T08:10:00Z', 'APP_RE_OPEN', 'DESKTOP'),
  // Outside the ranges asked for below.
  event('2026-03-20T10:00:00Z', 'APP_FIRST_OPEN', 'ANDROID'),
];

beforeAll(async () => {
  api = await createApiHarness();
  ({ token } = await api.registerUser('Funnel analyst'));
  const create = async (title: string) => {
    const response = await api.request({ method: 'POST', url: '/api/links', token, payload: { title, defaultUrl: 'https://example.com' } });
    expect(response.statusCode, response.body).toBe(201);
    return response.json().data.link.id as string;
  };
  linkId = await create('Funnel');
  quietId = await create('Quiet');
  await recordClicks(api.env.sql, [
    click(linkId, '2026-03-27T09:00:00Z', ANDROID_CHROME),
    click(linkId, '2026-03-27T09:30:00Z', { ...ANDROID_CHROME, visitor: 'visitor-2' }),
    click(linkId, '2026-03-27T10:00:00Z', IPHONE_SAFARI),
    click(linkId, '2026-03-28T23:20:00Z', IPHONE_SAFARI),
    click(linkId, '2026-03-30T08:00:00Z'),
  ]);
  // Two batches, as the worker commits them: the clicks' REDIRECTs with their batch, the opens on their own.
  const rollups = rollupsRepository(api.env.sql);
  const all = EVENTS.map((e, i) => rollupEvent(e, i));
  const redirects = all.filter((e) => e.name === 'REDIRECT');
  const others = all.filter((e) => e.name !== 'REDIRECT').map((e, i) => ({ ...e, eventId: `open-${i}` }));
  for (const events of [redirects, others]) {
    expect(await rollups.recordBatch({ batchId: randomUUID(), receivedClicks: 0, clicks: [], events })).toBe(true);
  }
});
afterAll(async () => {
  await api?.close();
});

const get = (url: string, query: Record<string, string>, as = token) =>
  api.request({ method: 'GET', url: `${url}?${new URLSearchParams(query)}`, token: as });

async function report(query: Record<string, string>, id = linkId): Promise<Report> {
  const response = await get(`/api/analytics/links/${id}`, query);
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data.analytics;
}

/**
 * A bucket's app events: `counts`, every other event 0, and their distinct visitors `uniques`, the
 * counts themselves unless given (the funnel link's events are each a visitor of its own).
 */
const events = (counts: Partial<EventCounts> = {}, uniques: Partial<EventCounts> = counts): BucketEvents => {
  const none = { REDIRECT: 0, APP_INSTALL: 0, APP_FIRST_OPEN: 0, APP_RE_OPEN: 0 };
  return { ...none, ...counts, uniques: { ...none, ...uniques } };
};

/** The buckets that had app events, as [date, events]. */
const withEvents = ({ timeSeries }: Report) =>
  timeSeries
    .filter((bucket) => APP_EVENT_NAMES.some((name) => bucket.appEvents[name] > 0))
    .map((bucket) => [bucket.date, bucket.appEvents]);

/** Each event's count summed over the buckets, and over the platforms of the range's funnel: the two must agree. */
function expectBucketsAddUpToTheFunnel(analytics: Report) {
  for (const name of APP_EVENT_NAMES) {
    const overBuckets = analytics.timeSeries.reduce((sum, bucket) => sum + bucket.appEvents[name], 0);
    const overPlatforms = Object.values(analytics.appEvents.counts[name]).reduce((sum, count) => sum + count, 0);
    expect(overBuckets, name).toBe(overPlatforms);
  }
}

describe('app events in the time series', () => {
  it('gives every bucket each event over every platform, zero-filled, adding up to the funnel', async () => {
    const days = await report({ startDate: '2026-03-26', endDate: '2026-03-31' });
    expect(days.timeSeries).toHaveLength(6);
    expect(days.timeSeries[0]).toEqual({ date: '2026-03-26T00:00:00.000Z', clicks: 0, uniqueClicks: 0, appEvents: events() });
    expect(withEvents(days)).toEqual([
      ['2026-03-27T00:00:00.000Z', events({ REDIRECT: 3, APP_INSTALL: 1, APP_FIRST_OPEN: 1 })],
      ['2026-03-28T00:00:00.000Z', events({ REDIRECT: 1, APP_INSTALL: 1 })],
      ['2026-03-29T00:00:00.000Z', events({ APP_FIRST_OPEN: 1, APP_RE_OPEN: 1 })],
      ['2026-03-30T00:00:00.000Z', events({ APP_RE_OPEN: 2 })],
    ]);
    // The clicks of each bucket are unchanged beside them.
    expect(days.timeSeries.map((bucket) => bucket.clicks)).toEqual([0, 3, 1, 0, 1, 0]);
    expectBucketsAddUpToTheFunnel(days);
    expect(days.appEvents.counts.REDIRECT).toEqual({ ANDROID: 2, IOS: 2, DESKTOP: 0, OTHER: 0 });
  });

  it('cuts day, week and month buckets at the time zone’s midnights, across the change to summer time', async () => {
    const paris = await report({ startDate: '2026-03-26', endDate: '2026-03-31', timezone: 'Europe/Paris' });
    expect(withEvents(paris)).toEqual([
      ['2026-03-26T23:00:00.000Z', events({ REDIRECT: 3, APP_INSTALL: 1, APP_FIRST_OPEN: 1 })],
      // 23:30 UTC on the 28th is the 29th in Paris; the 29th lasts 23 hours and the 30th starts at 22:00 UTC.
      ['2026-03-28T23:00:00.000Z', events({ REDIRECT: 1, APP_INSTALL: 1 })],
      ['2026-03-29T22:00:00.000Z', events({ APP_FIRST_OPEN: 1, APP_RE_OPEN: 3 })],
    ]);
    expectBucketsAddUpToTheFunnel(paris);

    const newYork = await report({ startDate: '2026-03-26', endDate: '2026-03-31', timezone: 'America/New_York' });
    expect(withEvents(newYork)).toEqual([
      ['2026-03-27T04:00:00.000Z', events({ REDIRECT: 3, APP_INSTALL: 1, APP_FIRST_OPEN: 1 })],
      ['2026-03-28T04:00:00.000Z', events({ REDIRECT: 1, APP_INSTALL: 1 })],
      ['2026-03-29T04:00:00.000Z', events({ APP_FIRST_OPEN: 1, APP_RE_OPEN: 1 })],
      ['2026-03-30T04:00:00.000Z', events({ APP_RE_OPEN: 2 })],
    ]);

    // ISO weeks from Monday 23 March, local midnight: the 30th's events start the second week in Paris.
    const weeks = await report({ startDate: '2026-03-23', endDate: '2026-04-05', timeBucket: 'week', timezone: 'Europe/Paris' });
    expect(withEvents(weeks)).toEqual([
      ['2026-03-22T23:00:00.000Z', events({ REDIRECT: 4, APP_INSTALL: 2, APP_FIRST_OPEN: 1 })],
      ['2026-03-29T22:00:00.000Z', events({ APP_FIRST_OPEN: 1, APP_RE_OPEN: 3 })],
    ]);
    const weeksUtc = await report({ startDate: '2026-03-23', endDate: '2026-04-05', timeBucket: 'week' });
    expect(withEvents(weeksUtc)).toEqual([
      ['2026-03-23T00:00:00.000Z', events({ REDIRECT: 4, APP_INSTALL: 2, APP_FIRST_OPEN: 2, APP_RE_OPEN: 1 })],
      ['2026-03-30T00:00:00.000Z', events({ APP_RE_OPEN: 2 })],
    ]);

    const months = await report({ startDate: '2026-03-01', endDate: '2026-04-30', timeBucket: 'month', timezone: 'Europe/Paris' });
    expect(withEvents(months)).toEqual([
      ['2026-02-28T23:00:00.000Z', events({ REDIRECT: 4, APP_INSTALL: 2, APP_FIRST_OPEN: 3, APP_RE_OPEN: 3 })],
    ]);
    expectBucketsAddUpToTheFunnel(months);
  });

  it('gives hour buckets from the hourly rows, and counts only the hours of a range that starts mid-day', async () => {
    const hours = await report({ startDate: '2026-03-27T09:00:00Z', endDate: '2026-03-27T12:59:00Z', timeBucket: 'hour' });
    expect(hours.timeSeries.map((bucket) => [bucket.date, bucket.clicks, bucket.appEvents])).toEqual([
      ['2026-03-27T09:00:00.000Z', 2, events({ REDIRECT: 2 })],
      ['2026-03-27T10:00:00.000Z', 1, events({ REDIRECT: 1 })],
      ['2026-03-27T11:00:00.000Z', 0, events()],
      ['2026-03-27T12:00:00.000Z', 0, events({ APP_INSTALL: 1 })],
    ]);
    expectBucketsAddUpToTheFunnel(hours);
    // Days whose range starts and ends inside a day: the edges come from hourly rows, the whole days between from daily rows.
    const edges = await report({ startDate: '2026-03-27T10:00:00Z', endDate: '2026-03-29T22:30:00Z' });
    expect(withEvents(edges)).toEqual([
      ['2026-03-27T00:00:00.000Z', events({ REDIRECT: 1, APP_INSTALL: 1, APP_FIRST_OPEN: 1 })],
      ['2026-03-28T00:00:00.000Z', events({ REDIRECT: 1, APP_INSTALL: 1 })],
      ['2026-03-29T00:00:00.000Z', events({ APP_FIRST_OPEN: 1, APP_RE_OPEN: 1 })],
    ]);
    expectBucketsAddUpToTheFunnel(edges);
  });

  it('shows no event of another link', async () => {
    const quiet = await report({ startDate: '2026-03-26', endDate: '2026-03-31' }, quietId);
    expect(withEvents(quiet)).toEqual([]);
  });
});

describe('unique app events', () => {
  let owner: string;
  let uniquesId: string;
  /**
   * Around Paris's change to summer time again: its 29 March runs from 23:00 UTC on the 28th to
   * 22:00 UTC on the 29th. One visitor (v1) is sent to the store on either side of the UTC midnight
   * inside that local day, and again on the 30th; one install re-opens twice in two hours.
   */
  const VISITS: Event[] = [
    event('2026-03-28T23:10:00Z', 'REDIRECT', 'ANDROID', 'v1'),
    event('2026-03-29T10:00:00Z', 'REDIRECT', 'ANDROID', 'v1'),
    event('2026-03-29T21:30:00Z', 'REDIRECT', 'ANDROID', 'v2'),
    event('2026-03-29T22:30:00Z', 'REDIRECT', 'ANDROID', 'v1'),
    event('2026-03-29T08:00:00Z', 'APP_RE_OPEN', 'IOS', 'install-1'),
    event('2026-03-29T09:00:00Z', 'APP_RE_OPEN', 'IOS', 'install-1'),
    event('2026-03-29T09:30:00Z', 'APP_RE_OPEN', 'IOS', 'open-1'),
  ];

  beforeAll(async () => {
    // An account of its own, so the funnel link's account exports above see none of these.
    ({ token: owner } = await api.registerUser('Uniques analyst'));
    const response = await api.request({
      method: 'POST',
      url: '/api/links',
      token: owner,
      payload: { title: 'Uniques', defaultUrl: 'https://example.com' },
    });
    uniquesId = response.json().data.link.id;
    const second = await api.request({
      method: 'POST',
      url: '/api/links',
      token: owner,
      payload: { title: 'Too', defaultUrl: 'https://example.com' },
    });
    const again = rollupEvent(event('2026-03-29T12:00:00Z', 'REDIRECT', 'ANDROID', 'v1'), 0, second.json().data.link.id);
    await rollupsRepository(api.env.sql).recordBatch({ batchId: randomUUID(), receivedClicks: 0, clicks: [], events: [again] });
    const rollups = rollupsRepository(api.env.sql);
    const all = VISITS.map((e, i) => rollupEvent(e, i, uniquesId));
    // The store visits with their batch; each re-open in a batch of its own, as the API queues them.
    await rollups.recordBatch({ batchId: randomUUID(), receivedClicks: 0, clicks: [], events: all.filter((e) => e.name === 'REDIRECT') });
    for (const [i, open] of all.filter((e) => e.name !== 'REDIRECT').entries()) {
      await rollups.recordBatch({
        batchId: randomUUID(),
        receivedClicks: 0,
        clicks: [],
        events: [{ ...open, eventId: `unique-open-${i}` }],
      });
    }
  });

  const uniquesReport = async (query: Record<string, string>): Promise<Report> => {
    const response = await get(`/api/analytics/links/${uniquesId}`, query, owner);
    expect(response.statusCode, response.body).toBe(200);
    return response.json().data.analytics;
  };

  it('merges each bucket’s sketches in the time zone’s days: a visitor on both sides of a UTC midnight is one', async () => {
    const paris = await uniquesReport({ startDate: '2026-03-28', endDate: '2026-03-31', timezone: 'Europe/Paris' });
    expect(withEvents(paris)).toEqual([
      // Paris's 29th: v1 at 00:10 CET (the 28th in UTC) and at 12:00 CEST, v2 at 23:30 CEST; one install's two re-opens and an open.
      ['2026-03-28T23:00:00.000Z', events({ REDIRECT: 3, APP_RE_OPEN: 3 }, { REDIRECT: 2, APP_RE_OPEN: 2 })],
      ['2026-03-29T22:00:00.000Z', events({ REDIRECT: 1 }, { REDIRECT: 1 })],
    ]);
    // The same events in UTC days: v1's first visit is on the 28th there.
    const utc = await uniquesReport({ startDate: '2026-03-28', endDate: '2026-03-31' });
    expect(withEvents(utc)).toEqual([
      ['2026-03-28T00:00:00.000Z', events({ REDIRECT: 1 }, { REDIRECT: 1 })],
      ['2026-03-29T00:00:00.000Z', events({ REDIRECT: 3, APP_RE_OPEN: 3 }, { REDIRECT: 2, APP_RE_OPEN: 2 })],
    ]);
    // A Paris month: the days' sketches merged, not their unique counts added up (2 + 1).
    const month = await uniquesReport({ startDate: '2026-03-01', endDate: '2026-03-31', timeBucket: 'month', timezone: 'Europe/Paris' });
    expect(withEvents(month)).toEqual([
      ['2026-02-28T23:00:00.000Z', events({ REDIRECT: 4, APP_RE_OPEN: 3 }, { REDIRECT: 2, APP_RE_OPEN: 2 })],
    ]);
    // Hours: each its own sketch.
    const hours = await uniquesReport({ startDate: '2026-03-29T08:00:00Z', endDate: '2026-03-29T09:59:00Z', timeBucket: 'hour' });
    expect(hours.timeSeries.map((bucket) => bucket.appEvents.uniques.APP_RE_OPEN)).toEqual([1, 2]);
  });

  it('gives the range’s distinct visitors per event and platform beside the unchanged counts, and the summary’s over the links', async () => {
    const { appEvents } = await uniquesReport({ startDate: '2026-03-28', endDate: '2026-03-31', timezone: 'Europe/Paris' });
    const none = { ANDROID: 0, IOS: 0, DESKTOP: 0, OTHER: 0 };
    expect(appEvents.counts.REDIRECT).toEqual({ ...none, ANDROID: 4 });
    expect(appEvents.uniques).toEqual({
      REDIRECT: { ...none, ANDROID: 2 },
      APP_INSTALL: none,
      APP_FIRST_OPEN: none,
      APP_RE_OPEN: { ...none, IOS: 2 },
    });
    // The funnel link's account: every event a visitor of its own, so its uniques are its counts.
    const funnel = await report({ startDate: '2026-03-26', endDate: '2026-03-31' });
    expect(funnel.appEvents.uniques).toEqual(Object.fromEntries(APP_EVENT_NAMES.map((name) => [name, funnel.appEvents.counts[name]])));
    // The summary, over both links of the account: v1's visit to the second link is still v1.
    const summary = async (query: Record<string, string>): Promise<Report['appEvents']> =>
      (await get('/api/analytics/summary', { breakdowns: 'true', ...query }, owner)).json().data.summary.appEvents;
    const allTime = await summary({});
    expect([allTime.counts.REDIRECT.ANDROID, allTime.uniques.REDIRECT.ANDROID, allTime.uniques.APP_RE_OPEN.IOS]).toEqual([5, 2, 2]);
    const day = await summary({ startDate: '2026-03-29', endDate: '2026-03-29' });
    expect([day.counts.REDIRECT.ANDROID, day.uniques.REDIRECT.ANDROID, day.uniques.APP_RE_OPEN.IOS]).toEqual([4, 2, 2]);
  });
});

type Row = Record<string, string>;
const csv = (body: string): Row[] => parse(body, { columns: true });

describe('app events in the exports', () => {
  const range = { startDate: '2026-03-27', endDate: '2026-03-29' };

  it('adds a row per event and platform after the clicks of each bucket in the long layout', async () => {
    const response = await get(`/api/analytics/links/${linkId}/export`, range);
    expect(response.statusCode, response.body).toBe(200);
    const rows = csv(response.body);
    const first = rows.filter((row) => row.bucket === '2026-03-27T00:00:00.000Z');
    expect(first.map((row) => row.dimension)).toEqual([
      'total',
      ...first.filter((row) => !['total', ...APP_EVENT_NAMES].includes(row.dimension!)).map((row) => row.dimension),
      'REDIRECT',
      'REDIRECT',
      'APP_INSTALL',
      'APP_FIRST_OPEN',
    ]);
    expect(first.slice(-4)).toEqual([
      { bucket: '2026-03-27T00:00:00.000Z', dimension: 'REDIRECT', value: 'ANDROID', clicks: '2' },
      { bucket: '2026-03-27T00:00:00.000Z', dimension: 'REDIRECT', value: 'IOS', clicks: '1' },
      { bucket: '2026-03-27T00:00:00.000Z', dimension: 'APP_INSTALL', value: 'ANDROID', clicks: '1' },
      { bucket: '2026-03-27T00:00:00.000Z', dimension: 'APP_FIRST_OPEN', value: 'ANDROID', clicks: '1' },
    ]);
    // Summed per event and platform, the rows give the report's funnel.
    const analytics = await report(range);
    for (const name of APP_EVENT_NAMES) {
      const perPlatform = { ANDROID: 0, IOS: 0, DESKTOP: 0, OTHER: 0 } as Record<string, number>;
      for (const row of rows.filter((row) => row.dimension === name)) perPlatform[row.value!]! += Number(row.clicks);
      expect(perPlatform, name).toEqual(analytics.appEvents.counts[name]);
    }
    // JSON carries the same rows, counts as numbers.
    const json = (await get(`/api/analytics/links/${linkId}/export`, { ...range, format: 'json' })).json();
    expect(json).toEqual(rows.map((row) => ({ ...row, clicks: Number(row.clicks) })));
  });

  it('puts each event on each platform in a column of the wide layout, in the time zone’s days', async () => {
    const response = await get(`/api/analytics/links/${linkId}/export`, {
      ...range,
      layout: 'wide',
      format: 'json',
      timezone: 'Europe/Paris',
    });
    expect(response.statusCode, response.body).toBe(200);
    const rows = response.json() as Record<string, string | number>[];
    const columns = Object.keys(rows[0]!);
    const eventColumns = columns.filter((column) => /^(redirect|app_install|app_first_open|app_re_open)_/.test(column));
    expect(eventColumns).toEqual(
      ['redirect', 'app_install', 'app_first_open', 'app_re_open'].flatMap((name) =>
        ['android', 'ios', 'desktop', 'other'].map((platform) => `${name}_${platform}`),
      ),
    );
    // Right after the clicks' fixed columns, before the top values of the open-ended dimensions.
    expect(columns.indexOf('redirect_android')).toBe(columns.indexOf('desktop_device') + 1);
    expect(rows.map((row) => [row.bucket_start, row.clicks, row.redirect_android, row.redirect_ios, row.app_install_ios])).toEqual([
      ['2026-03-26T23:00:00.000Z', 3, 2, 1, 0],
      ['2026-03-27T23:00:00.000Z', 0, 0, 0, 0],
      ['2026-03-28T23:00:00.000Z', 1, 0, 1, 1],
    ]);
    // Summed, each column gives the Paris report's funnel; its buckets' events match row by row.
    const paris = await report({ ...range, timezone: 'Europe/Paris' });
    for (const name of APP_EVENT_NAMES) {
      for (const [platform, count] of Object.entries(paris.appEvents.counts[name])) {
        const column = `${name.toLowerCase()}_${platform.toLowerCase()}`;
        expect(
          rows.reduce((sum, row) => sum + Number(row[column]), 0),
          column,
        ).toBe(count);
      }
      expect(
        rows.map((row) =>
          eventColumns.filter((column) => column.startsWith(`${name.toLowerCase()}_`)).reduce((n, c) => n + Number(row[c]), 0),
        ),
      ).toEqual(paris.timeSeries.map((bucket) => bucket.appEvents[name]));
    }
  });

  it('carries each link’s events in the account exports, and none to another account', async () => {
    const wide = (await get('/api/analytics/export', { ...range, layout: 'wide', format: 'json' })).json() as Record<
      string,
      number | string
    >[];
    expect(wide.filter((row) => row.link_id === linkId).reduce((sum, row) => sum + Number(row.redirect_android), 0)).toBe(2);
    expect(wide.filter((row) => row.link_id === quietId).every((row) => row.redirect_android === 0 && row.app_re_open_ios === 0)).toBe(
      true,
    );
    const long = csv((await get('/api/analytics/export', { ...range, format: 'csv' })).body);
    expect(long.filter((row) => row.dimension === 'APP_INSTALL').map((row) => [row.link_id, row.bucket, row.value, row.clicks])).toEqual([
      [linkId, '2026-03-27T00:00:00.000Z', 'ANDROID', '1'],
      [linkId, '2026-03-28T00:00:00.000Z', 'IOS', '1'],
    ]);
    const other = await api.registerUser('Someone else');
    expect((await get('/api/analytics/export', { ...range, format: 'json' }, other.token)).json()).toEqual([]);
    expect((await get(`/api/analytics/links/${linkId}/export`, range, other.token)).statusCode).toBe(403);
  });
});
