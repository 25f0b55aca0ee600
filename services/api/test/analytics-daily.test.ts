import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIMENSION_NAMES } from '@deeplink/core';
import { analyticsRepository, type ReportRange, wholeDaysOf } from '@deeplink/core/db';
import { ANDROID_CHROME, type ClickValues, recordClicks, rollupClick } from '@deeplink/test-kit/rollups';
import { BROWSER_AGENTS } from '@deeplink/test-kit/user-agents';
import { createApiHarness, type ApiHarness } from './harness.js';

// Reports read whole UTC days from the daily rollups and the hours at either edge from the hourly
// ones. Here every number is also computed from the hourly rows alone, the way it was before the
// daily tables existed, and the two must be equal, for ranges that start and end mid-day.

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const FIRST_DAY = Date.UTC(2026, 1, 23); // a Monday, ten days before March
const AGENTS: ClickValues[] = [...Object.keys(BROWSER_AGENTS).map((browser) => ({ browser })), ANDROID_CHROME];
const REFERRERS = ['direct', 't.co', 'www.google.com', 'news.example.org'];
const COUNTRIES = ['US', 'GB', 'Unknown'];

let api: ApiHarness;
let linkId: string;

beforeAll(async () => {
  api = await createApiHarness();
  const owner = await api.registerUser('Daily');
  const create = async (title: string) =>
    (
      await api.request({ method: 'POST', url: '/api/links', token: owner.token, payload: { title, defaultUrl: 'https://example.com' } })
    ).json().data.link.id as string;
  linkId = await create('Busy');
  const other = await create('Other');
  // Ten days, clicks in five hours of each, from visitors that come back on other days.
  const clicks = [];
  for (let day = 0; day < 10; day++) {
    for (const hour of [0, 5, 11, 17, 23]) {
      for (let k = 0; k < 2 + ((day + hour) % 4); k++) {
        const n = day * 31 + hour * 7 + k;
        clicks.push(
          rollupClick(linkId, FIRST_DAY + day * DAY + hour * HOUR + k * 60_000, {
            ...AGENTS[n % AGENTS.length],
            country: COUNTRIES[n % COUNTRIES.length]!,
            referrer: REFERRERS[n % REFERRERS.length]!,
            visitor: `visitor-${n % 23}`,
          }),
        );
      }
    }
    clicks.push(rollupClick(other, FIRST_DAY + day * DAY + 12 * HOUR));
  }
  await recordClicks(api.env.sql, clicks);
});
afterAll(async () => {
  await api?.close();
});

/** The report's numbers computed from click_hourly and click_hourly_dimensions alone. */
async function hourlyOnly({ start, end, timeBucket }: ReportRange) {
  const sql = api.env.sql;
  const [totals] = await sql<{ totalClicks: number; uniqueClicks: number }[]>`
    SELECT coalesce(sum(clicks), 0)::bigint AS "totalClicks",
           coalesce(round(hll_cardinality(hll_union_agg(visitors))), 0)::bigint AS "uniqueClicks"
    FROM click_hourly WHERE link_id = ${linkId} AND bucket >= ${start} AND bucket < ${end}`;
  const series = await sql<{ bucket: Date; clicks: number }[]>`
    SELECT date_trunc(${timeBucket}::text, bucket AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS bucket, sum(clicks)::bigint AS clicks
    FROM click_hourly WHERE link_id = ${linkId} AND bucket >= ${start} AND bucket < ${end} GROUP BY 1`;
  const dimensions = await sql<{ bucket: Date; dimension: string; value: string; clicks: number }[]>`
    SELECT date_trunc(${timeBucket}::text, bucket AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS bucket, dimension, value, sum(clicks)::bigint AS clicks
    FROM click_hourly_dimensions WHERE link_id = ${linkId} AND bucket >= ${start} AND bucket < ${end} GROUP BY 1, 2, 3`;
  return { ...totals!, series, dimensions };
}

const byValue = (rows: { dimension: string; value: string; clicks: number }[]) => {
  const sums = new Map<string, number>();
  for (const row of rows) sums.set(`${row.dimension}|${row.value}`, (sums.get(`${row.dimension}|${row.value}`) ?? 0) + row.clicks);
  return Object.fromEntries([...sums].sort(([a], [b]) => (a < b ? -1 : 1)));
};
const byBucket = <T extends { bucket: Date }>(rows: T[], key: (row: T) => string) =>
  rows.map((row) => `${row.bucket.toISOString()} ${key(row)}`).sort();

const at = (day: number, hour = 0) => new Date(FIRST_DAY + day * DAY + hour * HOUR);
const RANGES: [string, Date, Date][] = [
  ['mid-day to mid-day', at(1, 7), at(8, 18)],
  ['midnight to mid-day', at(2), at(6, 12)],
  ['mid-day to midnight', at(0, 23), at(9)],
  ['whole days', at(0), at(10)],
  ['across one midnight, no whole day', at(3, 12), at(4, 12)],
  ['inside one day', at(5, 3), at(5, 20)],
  ['one whole day and edges', at(4, 23), at(6, 1)],
];

describe('reports from daily and hourly rollups', () => {
  it('finds the whole days of a range', () => {
    expect(wholeDaysOf({ start: at(1, 7), end: at(8, 18) })).toEqual({ start: at(2), end: at(8) });
    expect(wholeDaysOf({ start: at(2), end: at(3) })).toEqual({ start: at(2), end: at(3) });
    expect(wholeDaysOf({ start: at(3, 12), end: at(4, 12) })).toEqual({ start: at(4, 12), end: at(4, 12) });
  });

  it.each(RANGES)('gives the same report as the hourly rows alone: %s', async (_name, start, end) => {
    const repository = analyticsRepository(api.env.sql);
    for (const timeBucket of ['hour', 'day', 'week', 'month'] as const) {
      const range = { start, end, timeBucket };
      const [report, expected] = await Promise.all([repository.linkReport(linkId, range, DIMENSION_NAMES), hourlyOnly(range)]);
      expect(report.totalClicks, timeBucket).toBeGreaterThan(0);
      expect(report.totalClicks, timeBucket).toBe(expected.totalClicks);
      expect(report.uniqueClicks, timeBucket).toBe(expected.uniqueClicks);
      expect(byValue(report.dimensions), timeBucket).toEqual(byValue(expected.dimensions));
      expect([...report.series].map(([ms, clicks]) => `${new Date(ms).toISOString()} ${clicks}`).sort(), timeBucket).toEqual(
        byBucket(expected.series, (row) => String(row.clicks)),
      );
    }
  });

  it.each(RANGES)('exports the same rows as the hourly rows alone: %s', async (_name, start, end) => {
    const repository = analyticsRepository(api.env.sql);
    for (const timeBucket of ['hour', 'day', 'week', 'month'] as const) {
      const range = { start, end, timeBucket };
      const rows = [];
      for await (const batch of repository.exportRows(linkId, range)) rows.push(...batch);
      const expected = await hourlyOnly(range);
      const totals = rows.filter((row) => row.dimension === 'total' && row.clicks > 0);
      expect(
        byBucket(totals, (row) => String(row.clicks)),
        timeBucket,
      ).toEqual(byBucket(expected.series, (row) => String(row.clicks)));
      const counts = rows.filter((row) => row.dimension !== 'total');
      const key = (row: { dimension: string; value: string; clicks: number }) => `${row.dimension} ${row.value} ${row.clicks}`;
      expect(byBucket(counts, key), timeBucket).toEqual(byBucket(expected.dimensions, key));
    }
  });
});
