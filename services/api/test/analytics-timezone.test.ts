import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RollupClick } from '@deeplink/core/db';
import { recordClicks, rollupClick as click } from '@deeplink/test-kit/rollups';
import { createApiHarness, type ApiHarness } from './harness.js';

/** The app events of a time series bucket that had none. */
const NONE_PER_EVENT = { REDIRECT: 0, APP_INSTALL: 0, APP_FIRST_OPEN: 0, APP_RE_OPEN: 0 };
/** A bucket without app events: every event 0, and so are its uniques. */
const NO_EVENTS = { ...NONE_PER_EVENT, uniques: NONE_PER_EVENT };

let api: ApiHarness;
let token: string;

const HOUR = 3_600_000;

beforeAll(async () => {
  api = await createApiHarness();
  ({ token } = await api.registerUser('Zones'));
});
afterAll(async () => {
  await api?.close();
});

const record = (clicks: RollupClick[]) => recordClicks(api.env.sql, clicks);

async function createLink(): Promise<string> {
  const response = await api.request({
    method: 'POST',
    url: '/api/links',
    token,
    payload: { title: 'Zones', defaultUrl: 'https://example.com' },
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data.link.id;
}

const report = async (id: string, query: Record<string, string>) => {
  const response = await api.request({ method: 'GET', url: `/api/analytics/links/${id}?${new URLSearchParams(query)}`, token });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data.analytics as {
    totalClicks: number;
    uniqueClicks: number;
    timeSeries: { date: string; clicks: number; uniqueClicks: number }[];
    range: { startDate: string; endDate: string };
  };
};

/** One click per UTC hour over [from, to), each from a visitor of its own. */
const hourly = (id: string, from: string, to: string) => {
  const clicks = [];
  for (let at = Date.parse(from), n = 0; at < Date.parse(to); at += HOUR, n++) clicks.push(click(id, at, { visitor: `visitor-${n}` }));
  return clicks;
};

describe('time zones (Europe/Paris around its DST changes)', () => {
  let id: string;
  beforeAll(async () => {
    id = await createLink();
    // 2026: clocks go forward on Sunday 29 March (02:00 → 03:00) and back on Sunday 25 October (03:00 → 02:00).
    await record([
      ...hourly(id, '2026-03-26T00:00:00Z', '2026-04-02T00:00:00Z'),
      ...hourly(id, '2026-10-22T00:00:00Z', '2026-10-29T00:00:00Z'),
    ]);
  });

  it('starts days at local midnight: the last Sunday of March has 23 hours, of October 25, and the days add up to the UTC total', async () => {
    const march = await report(id, { startDate: '2026-03-28', endDate: '2026-03-30', timezone: 'Europe/Paris' });
    expect(march.range).toEqual({ startDate: '2026-03-27T23:00:00.000Z', endDate: '2026-03-30T22:00:00.000Z', timeBucket: 'day' });
    expect(march.timeSeries.map(({ date, clicks }) => [date, clicks])).toEqual([
      ['2026-03-27T23:00:00.000Z', 24],
      ['2026-03-28T23:00:00.000Z', 23],
      ['2026-03-29T22:00:00.000Z', 24],
    ]);
    const marchUtc = await report(id, { startDate: '2026-03-27T23:00:00Z', endDate: '2026-03-30T21:59:59Z', timeBucket: 'hour' });
    expect(march.totalClicks).toBe(71);
    expect(marchUtc.totalClicks).toBe(71);
    // Names are case-insensitive, and UTC's aliases are UTC.
    expect(await report(id, { startDate: '2026-03-28', endDate: '2026-03-30', timezone: 'europe/paris' })).toEqual(march);
    const utc = await report(id, { startDate: '2026-03-28', endDate: '2026-03-30' });
    expect(await report(id, { startDate: '2026-03-28', endDate: '2026-03-30', timezone: 'Etc/GMT' })).toEqual(utc);

    const october = await report(id, { startDate: '2026-10-24', endDate: '2026-10-26', timezone: 'Europe/Paris' });
    expect(october.timeSeries.map(({ date, clicks }) => [date, clicks])).toEqual([
      ['2026-10-23T22:00:00.000Z', 24],
      ['2026-10-24T22:00:00.000Z', 25],
      ['2026-10-25T23:00:00.000Z', 24],
    ]);
    const octoberUtc = await report(id, { startDate: '2026-10-23T22:00:00Z', endDate: '2026-10-26T22:59:59Z', timeBucket: 'hour' });
    expect(octoberUtc.totalClicks).toBe(73);
    expect(october.timeSeries.reduce((sum, bucket) => sum + bucket.clicks, 0)).toBe(octoberUtc.totalClicks);
  });

  it('cuts weeks and months at local midnight too, and keeps hour buckets on UTC hours', async () => {
    const weeks = await report(id, { startDate: '2026-03-23', endDate: '2026-04-05', timeBucket: 'week', timezone: 'Europe/Paris' });
    // Monday 23 March 00:00 +01:00, Monday 30 March 00:00 +02:00.
    expect(weeks.timeSeries.map((bucket) => bucket.date)).toEqual(['2026-03-22T23:00:00.000Z', '2026-03-29T22:00:00.000Z']);
    expect(weeks.timeSeries.reduce((sum, bucket) => sum + bucket.clicks, 0)).toBe(7 * 24);
    // The first week ends at 2026-03-29T22:00Z: clicks from 26 March 00:00Z up to then.
    expect(weeks.timeSeries[0]!.clicks).toBe((Date.parse('2026-03-29T22:00:00Z') - Date.parse('2026-03-26T00:00:00Z')) / HOUR);

    const months = await report(id, { startDate: '2026-03-01', endDate: '2026-04-30', timeBucket: 'month', timezone: 'Europe/Paris' });
    expect(months.timeSeries.map((bucket) => bucket.date)).toEqual(['2026-02-28T23:00:00.000Z', '2026-03-31T22:00:00.000Z']);
    // April in Paris starts at 22:00Z on 31 March: the last two UTC hours of March count there.
    expect(months.timeSeries[1]!.clicks).toBe(24 + 2);

    const hoursParis = await report(id, { startDate: '2026-10-25', endDate: '2026-10-25', timeBucket: 'hour', timezone: 'Europe/Paris' });
    expect(hoursParis.timeSeries).toHaveLength(25);
    expect(hoursParis.timeSeries.every((bucket) => bucket.clicks === 1)).toBe(true);
  });

  it('refuses a zone off the whole hour, naming it and its offset, and an unknown zone', async () => {
    const kolkata = await api.request({ method: 'GET', url: `/api/analytics/links/${id}?timezone=Asia/Kolkata`, token });
    expect(kolkata.statusCode).toBe(400);
    expect(kolkata.json().error.code).toBe('INVALID_REQUEST');
    expect(kolkata.json().error.details[0].field).toBe('timezone');
    expect(kolkata.json().error.message).toContain('Asia/Kolkata is UTC+05:30');

    const unknown = await api.request({ method: 'GET', url: `/api/analytics/links/${id}?timezone=Mars/Olympus`, token });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error.details).toEqual([{ field: 'timezone', message: expect.stringContaining('IANA') }]);
  });

  it('exports the same local buckets as the report', async () => {
    const query = { startDate: '2026-10-24', endDate: '2026-10-26', timezone: 'Europe/Paris', format: 'json' };
    const response = await api.request({ method: 'GET', url: `/api/analytics/links/${id}/export?${new URLSearchParams(query)}`, token });
    expect(response.statusCode, response.body).toBe(200);
    const totals = (response.json() as { bucket: string; dimension: string; clicks: number }[]).filter((row) => row.dimension === 'total');
    const october = await report(id, { startDate: '2026-10-24', endDate: '2026-10-26', timezone: 'Europe/Paris' });
    expect(totals.map((row) => [row.bucket, row.clicks])).toEqual(october.timeSeries.map((bucket) => [bucket.date, bucket.clicks]));
  });
});

describe('unique clicks per bucket', () => {
  it('merges the hourly sketches of each bucket: never more than its clicks, never a sum of daily uniques', async () => {
    const id = await createLink();
    const regular = 'regular';
    const clicks = [];
    // One visitor every day of the ISO week of 2 March 2026 (twice on Monday); a new visitor each day besides.
    for (let day = 0; day < 7; day++) {
      const morning = Date.UTC(2026, 2, 2 + day, 9);
      clicks.push(click(id, morning, { visitor: regular }), click(id, morning + HOUR, { visitor: `new-${day + 1}` }));
    }
    clicks.push(click(id, Date.UTC(2026, 2, 2, 20), { visitor: regular }));
    await record(clicks);

    const days = await report(id, { startDate: '2026-03-02', endDate: '2026-03-08' });
    expect(days.timeSeries.map((bucket) => [bucket.clicks, bucket.uniqueClicks])).toEqual([[3, 2], ...Array(6).fill([2, 2])]);
    const week = await report(id, { startDate: '2026-03-02', endDate: '2026-03-08', timeBucket: 'week' });
    expect(week.timeSeries).toEqual([{ date: '2026-03-02T00:00:00.000Z', clicks: 15, uniqueClicks: 8, appEvents: NO_EVENTS }]);
    expect(week.uniqueClicks).toBe(8);
    const hours = await report(id, { startDate: '2026-03-02', endDate: '2026-03-02', timeBucket: 'hour' });
    expect(hours.timeSeries.filter((bucket) => bucket.clicks > 0).map((bucket) => [bucket.clicks, bucket.uniqueClicks])).toEqual([
      [1, 1],
      [1, 1],
      [1, 1],
    ]);
    // The same week in Paris (from hourly rows only) merges to the same visitors.
    const weekParis = await report(id, { startDate: '2026-03-02', endDate: '2026-03-08', timeBucket: 'week', timezone: 'Europe/Paris' });
    expect(weekParis.timeSeries.map((bucket) => [bucket.clicks, bucket.uniqueClicks])).toEqual([[15, 8]]);
  });
});
