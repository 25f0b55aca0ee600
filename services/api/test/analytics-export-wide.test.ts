import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANDROID_CHROME, recordClicks, rollupClick } from '@deeplink/test-kit/rollups';
import { BROWSER_AGENTS } from '@deeplink/test-kit/user-agents';
import { createApiHarness, type ApiHarness } from './harness.js';

let api: ApiHarness;
let token: string;
const links: Record<string, { id: string; url: string; title: string }> = {};

const WIDE_FIXED = [
  'link_id',
  'title',
  'short_url',
  'bucket_start',
  'clicks',
  'unique_clicks',
  'android',
  'ios',
  'desktop',
  'mobile',
  'desktop_device',
];
const range = { startDate: '2026-03-01', endDate: '2026-03-07' };
/**
 * Ten countries per link (each link's report names them all), fourteen in the export: the four the
 * ad alone has come last and are folded into country_Other.
 */
const COUNTRIES: Record<string, string[]> = {
  email: ['US', 'DE', 'CN', 'RU', 'FR', 'IN', 'ES', 'IT', 'BR', 'CH'],
  ad: ['US', 'DE', 'CN', 'RU', 'FR', 'IN', 'JP', 'GB', 'UA', 'Unknown'],
};

beforeAll(async () => {
  api = await createApiHarness();
  ({ token } = await api.registerUser('Analyst'));
  const create = async (key: string, title: string, tags: string[]) => {
    const response = await api.request({
      method: 'POST',
      url: '/api/links',
      token,
      payload: { title, defaultUrl: 'https://example.com', tags },
    });
    links[key] = response.json().data.link;
  };
  await create('email', 'Spring, "email" =launch', ['spring']);
  await create('ad', 'Printemps — annonce', ['spring']);
  await create('other', 'Winter', ['winter']);
  const browsers = Object.keys(BROWSER_AGENTS);
  const clicks = [];
  const seen: Record<string, number> = { email: 0, ad: 0 };
  for (let n = 0; n < 60; n++) {
    const key = n % 3 === 0 ? 'ad' : 'email';
    const at = Date.UTC(2026, 2, 1 + (n % 6), n % 24);
    const agent = n % 4 === 0 ? ANDROID_CHROME : { browser: browsers[n % browsers.length]! };
    clicks.push(rollupClick(links[key]!.id, at, { ...agent, country: COUNTRIES[key]![seen[key]!++ % 10]!, visitor: `visitor-${n}` }));
  }
  clicks.push(rollupClick(links.other!.id, '2026-03-02T10:00:00Z'));
  await recordClicks(api.env.sql, clicks);
});
afterAll(async () => {
  await api?.close();
});

const get = (url: string, query: Record<string, string>, as = token) =>
  api.request({ method: 'GET', url: `${url}?${new URLSearchParams(query)}`, token: as });

type WideRow = Record<string, string | number>;
const parseCsv = (body: string): WideRow[] =>
  parse(body, {
    columns: true,
    cast: (value, context) =>
      context.header ||
      !/^(clicks|unique_clicks|android|ios|desktop|mobile|desktop_device|(redirect|app_install|app_first_open|app_re_open)_[a-z]+|(country|browser|os|referrer)_.*)$/.test(
        String(context.column),
      )
        ? value
        : Number(value),
  });

const sum = (rows: WideRow[], column: string) => rows.reduce((total, row) => total + Number(row[column] ?? 0), 0);

describe('GET /analytics/export?layout=wide', () => {
  it("has one row per link and bucket that matches each link's JSON report, parsed back with a CSV library", async () => {
    const response = await get('/api/analytics/export', { ...range, tag: 'spring', layout: 'wide', format: 'csv' });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(response.headers['content-disposition']).toBe('attachment; filename="analytics-spring-2026-03-01-to-2026-03-07-day-wide.csv"');
    const rows = parseCsv(response.body);
    const columns = Object.keys(rows[0]!);
    expect(columns.slice(0, WIDE_FIXED.length)).toEqual(WIDE_FIXED);
    expect(columns).toContain('country_US');
    expect(columns).toContain('country_Other');
    expect(columns).toContain('browser_Other');
    expect(columns.filter((column) => column.startsWith('os_'))).toEqual(['os_Windows', 'os_Android', 'os_Other']);
    expect(columns.filter((column) => column.startsWith('referrer_'))).toEqual(['referrer_direct', 'referrer_Other']);
    expect(rows).toHaveLength(2 * 7);
    expect(new Set(rows.map((row) => row.link_id))).toEqual(new Set([links.email!.id, links.ad!.id]));
    expect(sum(rows, 'country_Other')).toBe(4 * 2);

    for (const key of ['email', 'ad']) {
      const link = links[key]!;
      const own = rows.filter((row) => row.link_id === link.id);
      expect(own.every((row) => row.title === link.title && row.short_url === link.url)).toBe(true);
      const report = (await get(`/api/analytics/links/${link.id}`, range)).json().data.analytics;
      expect(own.map((row) => [row.bucket_start, row.clicks, row.unique_clicks])).toEqual(
        report.timeSeries.map((bucket: { date: string; clicks: number; uniqueClicks: number }) => [
          bucket.date,
          bucket.clicks,
          bucket.uniqueClicks,
        ]),
      );
      expect({ android: sum(own, 'android'), ios: sum(own, 'ios'), desktop: sum(own, 'desktop') }).toEqual(report.platforms);
      expect({ Mobile: sum(own, 'mobile'), Desktop: sum(own, 'desktop_device') }).toEqual(report.devices);
      expect({ Windows: sum(own, 'os_Windows'), Android: sum(own, 'os_Android') }).toEqual(report.os);
      expect(sum(own, 'referrer_direct')).toBe(report.referrers.direct);
      // Countries outside the export's top 10 (over both links) are in country_Other.
      let folded = 0;
      for (const [country, clicks] of Object.entries(report.countries as Record<string, number>)) {
        if (country !== 'Other' && columns.includes(`country_${country}`)) expect(sum(own, `country_${country}`), country).toBe(clicks);
        else folded += clicks;
      }
      expect(sum(own, 'country_Other')).toBe(folded);
      // Each group of columns adds up to the bucket's clicks.
      for (const row of own) {
        const group = (prefix: string) =>
          columns.filter((column) => column.startsWith(prefix)).reduce((total, column) => total + Number(row[column]), 0);
        expect(group('country_')).toBe(row.clicks);
        expect(group('browser_')).toBe(row.clicks);
        expect(group('os_')).toBe(row.clicks);
        expect(group('referrer_')).toBe(row.clicks);
        expect(Number(row.android) + Number(row.ios) + Number(row.desktop)).toBe(row.clicks);
      }
    }
  });

  it('gives the same rows as JSON, and every link without a tag', async () => {
    const csv = parseCsv((await get('/api/analytics/export', { ...range, tag: 'spring', layout: 'wide' })).body);
    const json = await get('/api/analytics/export', { ...range, tag: 'spring', layout: 'wide', format: 'json' });
    expect(json.headers['content-type']).toBe('application/json; charset=utf-8');
    // CSV cells that a spreadsheet would run as a formula are written with a leading quote.
    expect(json.json()).toEqual(csv.map((row) => ({ ...row, title: String(row.title).replace(/^'/, '') })));
    const all = (await get('/api/analytics/export', { ...range, layout: 'wide', format: 'json' })).json();
    expect(all).toHaveLength(3 * 7);
    expect(sum(all, 'clicks')).toBe(61);
  });

  it("streams the long layout as each link's export led by its id", async () => {
    const response = await get('/api/analytics/export', { ...range, tag: 'spring', format: 'csv' });
    expect(response.headers['content-disposition']).toBe('attachment; filename="analytics-spring-2026-03-01-to-2026-03-07-day-long.csv"');
    const rows = parse(response.body, { columns: true }) as Record<string, string>[];
    expect(Object.keys(rows[0]!)).toEqual(['link_id', 'bucket', 'dimension', 'value', 'clicks']);
    for (const key of ['email', 'ad']) {
      const own = parse((await get(`/api/analytics/links/${links[key]!.id}/export`, range)).body, { columns: true });
      expect(rows.filter((row) => row.link_id === links[key]!.id).map(({ link_id: _id, ...row }) => row)).toEqual(own);
    }
  });

  it('exports one link wide, named after its title, in its time zone', async () => {
    const response = await get(`/api/analytics/links/${links.ad!.id}/export`, { ...range, layout: 'wide', timezone: 'Europe/Paris' });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-disposition']).toBe(
      `attachment; filename="analytics-Printemps_annonce-2026-03-01-to-2026-03-07-day-wide.csv"; filename*=UTF-8''${encodeURIComponent('analytics-Printemps — annonce-2026-03-01-to-2026-03-07-day-wide.csv')}`,
    );
    const rows = parseCsv(response.body);
    expect(rows[0]!.bucket_start).toBe('2026-02-28T23:00:00.000Z');
    const report = (await get(`/api/analytics/links/${links.ad!.id}`, { ...range, timezone: 'Europe/Paris' })).json().data.analytics;
    expect(rows.map((row) => row.clicks)).toEqual(report.timeSeries.map((bucket: { clicks: number }) => bucket.clicks));
  });

  it("never includes another account's links, and refuses bad parameters with the envelope", async () => {
    const other = await api.registerUser('Someone else');
    const empty = await get('/api/analytics/export', { ...range, layout: 'wide', format: 'json' }, other.token);
    expect(empty.json()).toEqual([]);
    const bad = await get('/api/analytics/export', { layout: 'tall' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.details[0].field).toBe('layout');
    expect((await api.request({ method: 'GET', url: '/api/analytics/export' })).statusCode).toBe(401);
  });
});
