// Filters on every analytics read: a known set of clicks, recorded through the worker's rollup
// writer (the repository the worker commits its batches with), read back through the link report,
// the summary and both export layouts under single, combined, repeated and negated filters. Every
// expected number is computed here from the click set, with a predicate written for each case.
import { randomUUID } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rollupsRepository, type RollupAppEvent, type RollupClick } from '@deeplink/core/db';
import { ANDROID_CHROME, type AgentValues, DESKTOP_CHROME, IPHONE_SAFARI, recordClicks, rollupClick } from '@deeplink/test-kit/rollups';
import { createApiHarness, type ApiHarness } from './harness.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const FIRST_DAY = Date.UTC(2026, 2, 1);

const AGENTS: AgentValues[] = [
  ANDROID_CHROME,
  IPHONE_SAFARI,
  DESKTOP_CHROME,
  { platform: 'android', browser: 'Samsung Internet', os: 'Android', device: 'Mobile' },
  { platform: 'desktop', browser: 'Firefox', os: 'Linux', device: 'Desktop' },
  { platform: 'ios', browser: 'Chrome', os: 'iOS', device: 'Mobile' },
];
const COUNTRIES = ['DE', 'FR', 'US', 'GB', 'Unknown'];
const REFERRERS = ['direct', 't.co', 'www.google.com', 'news.example.org'];

/** One click of the set, with every value the worker stores for it. */
interface Click {
  linkId: string;
  at: number;
  platform: AgentValues['platform'];
  device: AgentValues['device'];
  country: string;
  browser: string;
  os: string;
  referrer: string;
  visitor: string;
}

let api: ApiHarness;
let token: string;
let busyId: string;
let quietId: string;
let strangerId: string;
const clicks: Click[] = [];

/** Five days of clicks in seven hours of each, every combination of the values above turning up. */
function clickSet(linkId: string, days: number, seed: number): Click[] {
  const set: Click[] = [];
  for (let day = 0; day < days; day++) {
    for (const hour of [0, 3, 9, 14, 15, 20, 23]) {
      for (let k = 0; k < 1 + ((day + hour + seed) % 3); k++) {
        const n = seed + day * 53 + hour * 7 + k;
        set.push({
          linkId,
          at: FIRST_DAY + day * DAY + hour * HOUR + k * 60_000,
          ...AGENTS[n % AGENTS.length]!,
          country: COUNTRIES[(n * 3) % COUNTRIES.length]!,
          referrer: REFERRERS[(n * 5) % REFERRERS.length]!,
          visitor: `visitor-${n % 37}`,
        });
      }
    }
  }
  return set;
}

const toRollup = ({ linkId, at, visitor, ...values }: Click): RollupClick => rollupClick(linkId, at, { ...values, visitor });

/** App events of the busy link, one per platform and a few events: under platform filters they follow the filter. */
const EVENTS: [at: number, name: RollupAppEvent['name'], platform: RollupAppEvent['platform']][] = [
  [FIRST_DAY + DAY + 10 * HOUR, 'REDIRECT', 'ANDROID'],
  [FIRST_DAY + DAY + 11 * HOUR, 'REDIRECT', 'ANDROID'],
  [FIRST_DAY + 2 * DAY + 10 * HOUR, 'REDIRECT', 'IOS'],
  [FIRST_DAY + 2 * DAY + 12 * HOUR, 'APP_RE_OPEN', 'DESKTOP'],
  [FIRST_DAY + 2 * DAY + 13 * HOUR, 'APP_RE_OPEN', 'OTHER'],
];

beforeAll(async () => {
  api = await createApiHarness();
  ({ token } = await api.registerUser('Analyst'));
  const create = async (title: string, as = token) => {
    const response = await api.request({
      method: 'POST',
      url: '/api/links',
      token: as,
      payload: { title, defaultUrl: 'https://example.com' },
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json().data.link.id as string;
  };
  busyId = await create('Busy');
  quietId = await create('Quiet');
  strangerId = await create('Stranger', (await api.registerUser('Stranger')).token);
  clicks.push(...clickSet(busyId, 5, 0), ...clickSet(quietId, 3, 11));
  // Another account's clicks, with the same values: never in this account's numbers.
  const stranger = clickSet(strangerId, 5, 0);
  await recordClicks(api.env.sql, [...clicks, ...stranger].map(toRollup));
  const events = EVENTS.map(
    ([at, name, platform], i): RollupAppEvent => ({
      linkId: busyId,
      bucket: Math.floor(at / HOUR) * HOUR,
      name,
      platform,
      visitor: `event-${i}`,
      eventId: `event-${i}`,
    }),
  );
  expect(await rollupsRepository(api.env.sql).recordBatch({ batchId: randomUUID(), receivedClicks: 0, clicks: [], events })).toBe(true);
});
afterAll(async () => {
  await api?.close();
});

/** A query string with repeated parameters: `[['country', 'DE'], ['country', 'FR']]`. */
const queryOf = (params: [string, string][]) => new URLSearchParams(params).toString();

async function getJson(path: string, params: [string, string][]) {
  const response = await api.request({ method: 'GET', url: `/api${path}?${queryOf(params)}`, token });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data;
}

/** Clicks of the set on `linkIds` in [start, end) (by their hour) that `keep` selects. */
const selected = (linkIds: string[], start: number, end: number, keep: (click: Click) => boolean) =>
  clicks.filter((click) => {
    const hour = Math.floor(click.at / HOUR) * HOUR;
    return linkIds.includes(click.linkId) && hour >= start && hour < end && keep(click);
  });

const countBy = (set: Click[], key: (click: Click) => string) => {
  const counts: Record<string, number> = {};
  for (const click of set) counts[key(click)] = (counts[key(click)] ?? 0) + 1;
  return counts;
};
const distinctVisitors = (set: Click[]) => new Set(set.map((click) => click.visitor)).size;

/** Every breakdown of the clicks, as the report lists them: fixed values zero-filled, the others (fewer than 10 here) as counted. */
const breakdownsOf = (set: Click[]) => ({
  platforms: { android: 0, ios: 0, desktop: 0, ...countBy(set, (click) => click.platform) },
  devices: { Mobile: 0, Desktop: 0, ...countBy(set, (click) => click.device) },
  countries: countBy(set, (click) => click.country),
  browsers: countBy(set, (click) => click.browser),
  os: countBy(set, (click) => click.os),
  referrers: countBy(set, (click) => click.referrer),
});

/** Clicks and distinct visitors per bucket, each click in the last of `starts` at or before it. */
function seriesOf(set: Click[], starts: number[]) {
  const buckets = starts.map((start) => ({ date: new Date(start).toISOString(), clicks: 0, visitors: new Set<string>() }));
  for (const click of set) {
    const index = starts.findLastIndex((start) => start <= click.at);
    buckets[index]!.clicks++;
    buckets[index]!.visitors.add(click.visitor);
  }
  return buckets.map(({ date, clicks: count, visitors }) => ({ date, clicks: count, uniqueClicks: visitors.size }));
}

interface FilterCase {
  name: string;
  params: [string, string][];
  keep: (click: Click) => boolean;
  /** Whether the app events follow the filter (platform filters only). */
  appEventsFiltered: boolean;
}

const CASES: FilterCase[] = [
  { name: 'one country', params: [['country', 'DE']], keep: (c) => c.country === 'DE', appEventsFiltered: false },
  {
    name: 'platform and country, by label and in lower case',
    params: [
      ['platform', 'iOS'],
      ['country', 'de'],
    ],
    keep: (c) => c.platform === 'ios' && c.country === 'DE',
    appEventsFiltered: false,
  },
  {
    name: 'a repeated country',
    params: [
      ['country', 'DE'],
      ['country', 'FR'],
    ],
    keep: (c) => c.country === 'DE' || c.country === 'FR',
    appEventsFiltered: false,
  },
  {
    name: 'a negated country and a browser',
    params: [
      ['notCountry', 'US'],
      ['notCountry', 'Unknown'],
      ['browser', 'Chrome'],
    ],
    keep: (c) => c.country !== 'US' && c.country !== 'Unknown' && c.browser === 'Chrome',
    appEventsFiltered: false,
  },
  {
    name: 'referrer hosts in any case, and os',
    params: [
      ['referrer', 'T.CO'],
      ['referrer', 'direct'],
      ['notOs', 'Linux'],
    ],
    keep: (c) => (c.referrer === 't.co' || c.referrer === 'direct') && c.os !== 'Linux',
    appEventsFiltered: false,
  },
  { name: 'a device', params: [['device', 'mobile']], keep: (c) => c.device === 'Mobile', appEventsFiltered: false },
  { name: 'one platform', params: [['platform', 'Android']], keep: (c) => c.platform === 'android', appEventsFiltered: true },
  {
    name: 'a negated platform, in stored form',
    params: [['notPlatform', 'ios']],
    keep: (c) => c.platform !== 'ios',
    appEventsFiltered: true,
  },
  { name: 'a value no click has', params: [['country', 'JP']], keep: () => false, appEventsFiltered: false },
];

/** The app events of EVENTS in [start, end) per event and platform that the filter keeps. */
function eventCounts(start: number, end: number, platforms?: (platform: string) => boolean) {
  const counts: Record<string, Record<string, number>> = {};
  for (const [at, name, platform] of EVENTS) {
    if (at < start || at >= end || (platforms && !platforms(platform))) continue;
    counts[name] = { ...counts[name], [platform]: (counts[name]?.[platform] ?? 0) + 1 };
  }
  return counts;
}

/**
 * The range of the report and export cases, with mid-day edges: whole days from the daily rollups,
 * the hours around them from the hourly ones.
 */
const start = FIRST_DAY + 10 * HOUR;
const end = FIRST_DAY + 3 * DAY + 14 * HOUR;
const range: [string, string][] = [
  ['startDate', new Date(start).toISOString()],
  ['endDate', new Date(end - HOUR).toISOString()],
];

describe('the link report under filters', () => {
  it.each(CASES)('counts only the matching clicks: $name', async ({ params, keep, appEventsFiltered }) => {
    const set = selected([busyId], start, end, keep);
    const report = await getJson(`/analytics/links/${busyId}`, [...range, ['timeBucket', 'day'], ...params]);
    expect(report.analytics.totalClicks).toBe(set.length);
    expect(report.analytics.uniqueClicks).toBe(distinctVisitors(set));
    const { platforms, devices, countries, browsers, os, referrers } = report.analytics;
    expect({ platforms, devices, countries, browsers, os, referrers }).toEqual(breakdownsOf(set));
    const days = [0, 1, 2, 3].map((day) => FIRST_DAY + day * DAY);
    expect(
      report.analytics.timeSeries.map(({ date, clicks: count, uniqueClicks }: Record<string, unknown>) => ({
        date,
        clicks: count,
        uniqueClicks,
      })),
    ).toEqual(seriesOf(set, days));
    expect(report.analytics.appEventsFiltered).toBe(appEventsFiltered);
    // The funnel's clicks are the platform breakdown; its events follow platform filters only.
    expect(report.analytics.appEvents.counts.CLICK).toEqual({
      ANDROID: platforms.android,
      IOS: platforms.ios,
      DESKTOP: platforms.desktop,
      OTHER: 0,
    });
    const platformFilter = appEventsFiltered
      ? (platform: string) => keep({ ...clicks[0]!, platform: platform.toLowerCase() as Click['platform'] })
      : undefined;
    const expectedEvents = eventCounts(start, end, platformFilter);
    for (const name of ['REDIRECT', 'APP_RE_OPEN'] as const) {
      expect(report.analytics.appEvents.counts[name]).toEqual({ ANDROID: 0, IOS: 0, DESKTOP: 0, OTHER: 0, ...expectedEvents[name] });
    }
  });

  it('gives the same numbers by hour, and unfiltered as before', async () => {
    const hours = Array.from({ length: (end - start) / HOUR }, (_, i) => start + i * HOUR);
    for (const { params, keep } of [CASES[1]!, CASES[3]!]) {
      const set = selected([busyId], start, end, keep);
      const report = await getJson(`/analytics/links/${busyId}`, [...range, ['timeBucket', 'hour'], ...params]);
      expect(report.analytics.totalClicks).toBe(set.length);
      expect(
        report.analytics.timeSeries.map(({ date, clicks: count, uniqueClicks }: Record<string, unknown>) => ({
          date,
          clicks: count,
          uniqueClicks,
        })),
      ).toEqual(seriesOf(set, hours));
    }
    const all = selected([busyId], start, end, () => true);
    const unfiltered = await getJson(`/analytics/links/${busyId}`, [...range, ['timeBucket', 'day']]);
    expect(unfiltered.analytics.totalClicks).toBe(all.length);
    expect(unfiltered.analytics.appEventsFiltered).toBe(true);
    expect(unfiltered.analytics.countries).toEqual(breakdownsOf(all).countries);
  });

  it('cuts the days of a zone off UTC under filters', async () => {
    // Asia/Tokyo is UTC+9 all year: its 2 March starts at 1 March 15:00 UTC.
    const tokyo = (day: number) => Date.UTC(2026, 2, day) - 9 * HOUR;
    const params: [string, string][] = [
      ['startDate', '2026-03-02'],
      ['endDate', '2026-03-04'],
      ['timezone', 'Asia/Tokyo'],
      ['timeBucket', 'day'],
      ['notCountry', 'DE'],
      ['platform', 'desktop'],
      ['platform', 'android'],
    ];
    const keep = (c: Click) => c.country !== 'DE' && c.platform !== 'ios';
    const set = selected([busyId], tokyo(2), tokyo(5), keep);
    const report = await getJson(`/analytics/links/${busyId}`, params);
    expect(report.analytics.range).toEqual({
      startDate: new Date(tokyo(2)).toISOString(),
      endDate: new Date(tokyo(5)).toISOString(),
      timeBucket: 'day',
    });
    expect(report.analytics.totalClicks).toBe(set.length);
    expect(
      report.analytics.timeSeries.map(({ date, clicks: count, uniqueClicks }: Record<string, unknown>) => ({
        date,
        clicks: count,
        uniqueClicks,
      })),
    ).toEqual(seriesOf(set, [tokyo(2), tokyo(3), tokyo(4)]));
    expect(report.analytics.countries).toEqual(breakdownsOf(set).countries);
  });

  it("refuses another account's link as without filters", async () => {
    const response = await api.request({ method: 'GET', url: `/api/analytics/links/${strangerId}?country=DE`, token });
    expect(response.statusCode).toBe(403);
  });
});

describe('the summary under filters', () => {
  it.each(CASES)('counts only the matching clicks, all time and over a range: $name', async ({ params, keep, appEventsFiltered }) => {
    for (const [start, end, range] of [
      [0, Number.MAX_SAFE_INTEGER, []],
      [
        FIRST_DAY + DAY,
        FIRST_DAY + 3 * DAY,
        [
          ['startDate', '2026-03-02'],
          ['endDate', '2026-03-03'],
        ],
      ],
    ] as [number, number, [string, string][]][]) {
      const set = selected([busyId, quietId], start, end, keep);
      const { summary } = await getJson('/analytics/summary', [...range, ['breakdowns', 'true'], ...params]);
      expect(summary.totalLinks).toBe(2);
      expect(summary.totalClicks).toBe(set.length);
      const perLink = [
        { id: busyId, title: 'Busy', clicks: set.filter((click) => click.linkId === busyId).length },
        { id: quietId, title: 'Quiet', clicks: set.filter((click) => click.linkId === quietId).length },
      ];
      expect(summary.topLinks).toEqual(
        perLink.filter((link) => link.clicks > 0).sort((a, b) => b.clicks - a.clicks || (a.title < b.title ? -1 : 1)),
      );
      const { platforms, devices, countries, browsers, os, referrers } = summary;
      expect({ platforms, devices, countries, browsers, os, referrers }).toEqual(breakdownsOf(set));
      expect(summary.appEventsFiltered).toBe(appEventsFiltered);
    }
  });

  it('filters the totals without breakdowns too', async () => {
    const { summary } = await getJson('/analytics/summary', [['country', 'FR']]);
    expect(summary.totalClicks).toBe(selected([busyId, quietId], 0, Number.MAX_SAFE_INTEGER, (c) => c.country === 'FR').length);
    expect(summary.appEventsFiltered).toBe(false);
    expect(summary.countries).toBeUndefined();
  });
});

describe('the exports under filters', () => {
  const byDay: [string, string][] = [...range, ['timeBucket', 'day']];
  const days = [0, 1, 2, 3].map((day) => FIRST_DAY + day * DAY);

  async function download(path: string, params: [string, string][]) {
    const response = await api.request({ method: 'GET', url: `/api${path}?${queryOf(params)}`, token });
    expect(response.statusCode, response.body).toBe(200);
    return parse(response.body, { columns: true }) as Record<string, string>[];
  }

  /** The long rows of the clicks, as the export writes them (app events left out): every bucket's total, then its values. */
  const longRows = (set: Click[]) => {
    const rows: string[] = [];
    for (const [i, start] of days.entries()) {
      const inBucket = set.filter((click) => click.at >= start && (i === days.length - 1 || click.at < days[i + 1]!));
      const bucket = new Date(start).toISOString();
      rows.push(`${bucket} total all ${inBucket.length}`);
      for (const dimension of ['browser', 'country', 'device', 'os', 'platform', 'referrer'] as const) {
        for (const [value, count] of Object.entries(countBy(inBucket, (click) => click[dimension]))) {
          rows.push(`${bucket} ${dimension} ${value} ${count}`);
        }
      }
    }
    return rows.sort();
  };
  const clickRows = (rows: Record<string, string>[]) =>
    rows
      .filter((row) => row.dimension === row.dimension!.toLowerCase())
      .map((row) => `${row.bucket} ${row.dimension} ${row.value} ${row.clicks}`);

  it.each(CASES)('long, one link: $name', async ({ params, keep, appEventsFiltered }) => {
    const rows = await download(`/analytics/links/${busyId}/export`, [...byDay, ...params]);
    expect(clickRows(rows).sort()).toEqual(longRows(selected([busyId], start, end, keep)));
    // The app events: filtered by platform filters only, as in the report.
    const events = rows.filter((row) => row.dimension !== row.dimension!.toLowerCase());
    const platformFilter = appEventsFiltered
      ? (platform: string) => keep({ ...clicks[0]!, platform: platform.toLowerCase() as Click['platform'] })
      : undefined;
    const expected = eventCounts(start, end, platformFilter);
    expect(events.reduce((sum, row) => sum + Number(row.clicks), 0)).toBe(
      Object.values(expected).reduce((sum, counts) => sum + Object.values(counts).reduce((a, b) => a + b, 0), 0),
    );
  });

  it.each(CASES)('long and wide, every link: $name', async ({ params, keep }) => {
    const long = await download('/analytics/export', [...byDay, ...params]);
    for (const linkId of [busyId, quietId]) {
      const own = long.filter((row) => row.link_id === linkId);
      expect(clickRows(own).sort()).toEqual(longRows(selected([linkId], start, end, keep)));
    }
    expect(long.some((row) => row.link_id === strangerId)).toBe(false);

    const wide = await download('/analytics/export', [...byDay, ['layout', 'wide'], ...params]);
    expect(wide).toHaveLength(2 * days.length);
    for (const linkId of [busyId, quietId]) {
      const set = selected([linkId], start, end, keep);
      const rows = wide.filter((row) => row.link_id === linkId);
      const series = seriesOf(set, days);
      expect(rows.map((row) => [row.bucket_start, Number(row.clicks), Number(row.unique_clicks)])).toEqual(
        series.map((bucket) => [bucket.date, bucket.clicks, bucket.uniqueClicks]),
      );
      const sum = (column: string) => rows.reduce((total, row) => total + Number(row[column] ?? 0), 0);
      const expected = breakdownsOf(set);
      expect([sum('android'), sum('ios'), sum('desktop')]).toEqual([
        expected.platforms.android,
        expected.platforms.ios,
        expected.platforms.desktop,
      ]);
      expect([sum('mobile'), sum('desktop_device')]).toEqual([expected.devices.Mobile, expected.devices.Desktop]);
      for (const [country, count] of Object.entries(expected.countries)) expect(sum(`country_${country}`), country).toBe(count);
      for (const [host, count] of Object.entries(expected.referrers)) expect(sum(`referrer_${host}`), host).toBe(count);
    }
    // The columns are the filtered clicks' values: a country no matching click has gets none.
    const columns = Object.keys(wide[0] ?? {});
    const countries = new Set(selected([busyId, quietId], start, end, keep).map((click) => `country_${click.country}`));
    expect(columns.filter((column) => column.startsWith('country_') && column !== 'country_Other').sort()).toEqual([...countries].sort());
  });
});

describe('referrer hosts past the first 100 of an hour', () => {
  it('are Other in the combination rollups: a filter on such a host misses it, its negation keeps it', async () => {
    const owner = await api.registerUser('Widely shared');
    const response = await api.request({
      method: 'POST',
      url: '/api/links',
      token: owner.token,
      payload: { title: 'Shared', defaultUrl: 'https://example.com' },
    });
    const linkId = response.json().data.link.id as string;
    // 105 hosts in one hour, a click each: the first 100 by name keep it, the last 5 are Other.
    const hosts = Array.from({ length: 105 }, (_, i) => `h${String(i + 1).padStart(3, '0')}.example`);
    await recordClicks(
      api.env.sql,
      hosts.map((referrer, i) => rollupClick(linkId, FIRST_DAY + 10 * HOUR + i * 1000, { ...IPHONE_SAFARI, referrer })),
    );
    const total = async (params: [string, string][]) => {
      const query = queryOf([['startDate', '2026-03-01'], ['endDate', '2026-03-01'], ...params]);
      const reply = await api.request({ method: 'GET', url: `/api/analytics/links/${linkId}?${query}`, token: owner.token });
      expect(reply.statusCode, reply.body).toBe(200);
      return reply.json().data.analytics as { totalClicks: number; referrers: Record<string, number> };
    };
    expect((await total([['referrer', 'h100.example']])).totalClicks).toBe(1);
    expect((await total([['referrer', 'h101.example']])).totalClicks).toBe(0);
    expect((await total([['notReferrer', 'h101.example']])).totalClicks).toBe(105);
    // Under any filter the breakdown is read from the combination rows: the 5 folded hosts are in Other.
    const filtered = await total([['platform', 'iOS']]);
    expect(filtered.totalClicks).toBe(105);
    expect(filtered.referrers).toEqual({ ...Object.fromEntries(hosts.slice(0, 10).map((host) => [host, 1])), Other: 95 });
    // Unfiltered, every host by name (the top 10, then the rest): the same numbers.
    expect((await total([])).referrers).toEqual(filtered.referrers);
  });
});

describe('invalid filters', () => {
  const ROUTES = () => [`/analytics/links/${busyId}`, '/analytics/summary', `/analytics/links/${busyId}/export`, '/analytics/export'];
  const refused = async (path: string, params: [string, string][]) => {
    const response = await api.request({ method: 'GET', url: `/api${path}?${queryOf(params)}`, token });
    expect(response.statusCode, `${path} ${queryOf(params)}: ${response.body}`).toBe(400);
    const body = response.json();
    expect(body.success).toBe(false);
    expect(body.error.code).toBe('INVALID_REQUEST');
    return body.error.details as { field: string; message: string }[];
  };

  it.each([
    ['a country that is not a code', [['country', 'Germany']], 'country', /ISO country code/],
    ['an unknown platform', [['platform', 'Windows Phone']], 'platform', /Android, iOS, Desktop/],
    ['an unknown device', [['notDevice', 'Tablet']], 'notDevice', /Mobile, Desktop/],
    ['Other as a country', [['country', 'Other']], 'country', /Other/],
    ['Other as a browser', [['notBrowser', 'Other']], 'notBrowser', /Other/],
    ['Other as a referrer', [['referrer', 'other']], 'referrer', /Other/],
    ['an empty value', [['os', '']], 'os', /empty/],
    ['a value of 201 characters', [['browser', 'x'.repeat(201)]], 'browser', /200 characters/],
    ['a control character', [['referrer', 'a\u0000b']], 'referrer', /printable/],
    ['21 values', Array.from({ length: 21 }, (_, i) => ['notReferrer', `host-${i}.example`]), 'notReferrer', /at most 20/],
  ] as [string, [string, string][], string, RegExp][])('%s, on every route', async (_name, params, field, message) => {
    for (const path of ROUTES()) {
      const details = await refused(path, params);
      expect(details).toEqual([{ field, message: expect.stringMatching(message) }]);
    }
  });

  it('takes 20 values of 200 characters', async () => {
    const params = Array.from({ length: 20 }, (_, i): [string, string] => ['notBrowser', `${i}`.padEnd(200, 'x')]);
    const report = await getJson(`/analytics/links/${busyId}`, [['startDate', '2026-03-01'], ['endDate', '2026-03-05'], ...params]);
    expect(report.analytics.totalClicks).toBe(selected([busyId], 0, Number.MAX_SAFE_INTEGER, () => true).length);
  });

  it('refuses unknown parameters, naming them', async () => {
    for (const path of ROUTES()) {
      expect(await refused(path, [['countries', 'DE']])).toEqual([
        { field: 'countries', message: 'is not a query parameter of this operation' },
      ]);
      expect(await refused(path, [['not_country', 'DE']])).toEqual([
        { field: 'not_country', message: 'is not a query parameter of this operation' },
      ]);
    }
  });
});
