import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RollupClick } from '@deeplink/core/db';
import { ANDROID_CHROME, IPHONE_SAFARI, recordClicks, rollupClick as click } from '@deeplink/test-kit/rollups';
import { createApiHarness, type ApiHarness } from './harness.js';

let api: ApiHarness;
let owner: { token: string };

beforeAll(async () => {
  api = await createApiHarness();
  owner = await api.registerUser('Exporter');
});
afterAll(async () => {
  await api?.close();
});

const record = (clicks: RollupClick[]) => recordClicks(api.env.sql, clicks);

async function createLink(token = owner.token): Promise<string> {
  const response = await api.request({
    method: 'POST',
    url: '/api/links',
    token,
    payload: { title: 'Export', defaultUrl: 'https://example.com' },
  });
  if (response.statusCode !== 201) throw new Error(`create failed: ${response.body}`);
  return response.json().data.link.id;
}

const get = (url: string, query: Record<string, string>, token = owner.token) =>
  api.request({ method: 'GET', url: `${url}?${new URLSearchParams(query).toString()}`, token });

interface Row {
  bucket: string;
  dimension: string;
  value: string;
  clicks: number;
}

/** RFC 4180 parser: quoted fields may hold commas, doubled quotes and line breaks. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (quoted && char === '"' && text[i + 1] === '"') {
      field += '"';
      i++;
    } else if (char === '"') {
      quoted = !quoted;
    } else if (!quoted && char === ',') {
      record.push(field);
      field = '';
    } else if (!quoted && char === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i++;
    } else {
      field += char;
    }
  }
  expect(record.length + field.length, 'the file ends with CRLF').toBe(0);
  return records;
}

async function exportCsv(id: string, query: Record<string, string>): Promise<Row[]> {
  const response = await get(`/api/analytics/links/${id}/export`, { ...query, format: 'csv' });
  expect(response.statusCode, response.body).toBe(200);
  const [header, ...records] = parseCsv(response.body);
  expect(header).toEqual(['bucket', 'dimension', 'value', 'clicks']);
  return records.map(([bucket, dimension, value, clicks]) => ({
    bucket: bucket!,
    dimension: dimension!,
    value: value!,
    clicks: Number(clicks),
  }));
}

/** What the JSON report shows, rebuilt from export rows. */
function fromRows(rows: Row[]) {
  const sumBy = (dimension: string) => {
    const counts: Record<string, number> = {};
    for (const row of rows.filter((r) => r.dimension === dimension)) counts[row.value] = (counts[row.value] ?? 0) + row.clicks;
    return counts;
  };
  const totals = rows.filter((row) => row.dimension === 'total');
  return {
    totalClicks: totals.reduce((n, row) => n + row.clicks, 0),
    timeSeries: totals.map((row) => ({ date: row.bucket, clicks: row.clicks })),
    platforms: sumBy('platform'),
    countries: sumBy('country'),
    browsers: sumBy('browser'),
    devices: sumBy('device'),
    referrers: sumBy('referrer'),
    os: sumBy('os'),
  };
}

/** The export has no unique visitors per bucket: the report's series without them. */
const withoutUniques = (series: { date: string; clicks: number }[]) => series.map(({ date, clicks }) => ({ date, clicks }));

const nonZero = (counts: Record<string, number>) => Object.fromEntries(Object.entries(counts).filter(([, n]) => n > 0));

describe('GET /api/analytics/links/:id/export', () => {
  let id: string;
  const range = { startDate: '2026-03-01', endDate: '2026-03-04', timeBucket: 'day' };
  beforeAll(async () => {
    id = await createLink();
    await record([
      click(id, '2026-03-01T08:00:00Z', { referrer: 'www.example.com' }),
      click(id, '2026-03-01T09:00:00Z', { ...ANDROID_CHROME, country: 'AU', visitor: 'second' }),
      click(id, '2026-03-03T23:59:59.999Z', { ...IPHONE_SAFARI, referrer: 'x"y,z.example' }),
      click(id, '2026-03-04T00:00:00Z', { browser: 'Firefox', os: 'Linux' }),
      click(id, '2026-03-05T00:00:00Z'), // outside the range
    ]);
  });

  it('streams CSV that adds up to the same numbers as the JSON report', async () => {
    const rows = await exportCsv(id, range);
    const report = (await get(`/api/analytics/links/${id}`, range)).json().data.analytics;
    const rebuilt = fromRows(rows);
    expect(rebuilt.totalClicks).toBe(4);
    expect(rebuilt.totalClicks).toBe(report.totalClicks);
    expect(rebuilt.timeSeries).toEqual(withoutUniques(report.timeSeries));
    for (const key of ['platforms', 'countries', 'browsers', 'devices', 'referrers'] as const) {
      expect(rebuilt[key], key).toEqual(nonZero(report[key]));
    }
    expect(Object.values(rebuilt.os).reduce((a, b) => a + b, 0)).toBe(4);
  });

  it('starts each bucket with its zero-filled total row, then dimension rows in order', async () => {
    const rows = await exportCsv(id, range);
    expect(rows.filter((row) => row.dimension === 'total')).toEqual([
      { bucket: '2026-03-01T00:00:00.000Z', dimension: 'total', value: 'all', clicks: 2 },
      { bucket: '2026-03-02T00:00:00.000Z', dimension: 'total', value: 'all', clicks: 0 },
      { bucket: '2026-03-03T00:00:00.000Z', dimension: 'total', value: 'all', clicks: 1 },
      { bucket: '2026-03-04T00:00:00.000Z', dimension: 'total', value: 'all', clicks: 1 },
    ]);
    // Byte order, with the total first: NUL sorts before any dimension name.
    const keys = rows.map((row) => [row.bucket, row.dimension === 'total' ? '' : row.dimension, row.value].join('\0'));
    expect(keys).toEqual([...keys].sort());
    expect(rows.filter((row) => row.bucket === '2026-03-02T00:00:00.000Z')).toHaveLength(1);
    expect(rows.find((row) => row.dimension === 'browser' && row.bucket === '2026-03-01T00:00:00.000Z')).toEqual({
      bucket: '2026-03-01T00:00:00.000Z',
      dimension: 'browser',
      value: 'Chrome',
      clicks: 2,
    });
  });

  it('quotes values that hold commas and quotes', async () => {
    const response = await get(`/api/analytics/links/${id}/export`, { ...range, format: 'csv' });
    expect(response.body).toContain('2026-03-03T00:00:00.000Z,referrer,"x""y,z.example",1\r\n');
    const rows = await exportCsv(id, range);
    expect(rows).toContainEqual({ bucket: '2026-03-03T00:00:00.000Z', dimension: 'referrer', value: 'x"y,z.example', clicks: 1 });
  });

  it("names the file after the link's title and the range, and sets the media type per format", async () => {
    const csv = await get(`/api/analytics/links/${id}/export`, range);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toBe('attachment; filename="analytics-Export-2026-03-01-to-2026-03-04-day.csv"');
    const json = await get(`/api/analytics/links/${id}/export`, { ...range, format: 'json', timeBucket: 'week' });
    expect(json.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(json.headers['content-disposition']).toBe('attachment; filename="analytics-Export-2026-03-01-to-2026-03-04-week.json"');
  });

  it('gives the same rows as a JSON array', async () => {
    const json = await get(`/api/analytics/links/${id}/export`, { ...range, format: 'json' });
    expect(json.statusCode).toBe(200);
    expect(JSON.parse(json.body)).toEqual(await exportCsv(id, range));
  });

  it('streams exports larger than one cursor batch without losing or repeating rows', async () => {
    const big = await createLink();
    const hours = 24 * 60;
    await record(Array.from({ length: hours }, (_, h) => click(big, Date.UTC(2026, 0, 1, h, 30))));
    const query = { startDate: '2026-01-01', endDate: '2026-03-02', timeBucket: 'hour' };
    const rows = await exportCsv(big, query);
    const totals = rows.filter((row) => row.dimension === 'total');
    expect(totals).toHaveLength(hours + 24);
    expect(new Set(totals.map((row) => row.bucket)).size).toBe(hours + 24);
    expect(totals.reduce((n, row) => n + row.clicks, 0)).toBe(hours);
    // 6 dimension rows per hour with a click, plus one total row per hour of the range.
    expect(rows).toHaveLength(hours * 7 + 24);
    const json = JSON.parse((await get(`/api/analytics/links/${big}/export`, { ...query, format: 'json' })).body);
    expect(json).toEqual(rows);
  });

  it('buckets clicks the same way in the report and in the export, for every bucket size', async () => {
    const edges = await createLink();
    // Month ends, ISO week ends and year ends, a leap day, on both sides of midnight UTC.
    const instants = [
      '2023-12-31T23:59:59.999Z',
      '2024-01-01T00:00:00Z',
      '2024-02-29T23:30:00Z',
      '2024-03-01T00:00:00Z',
      '2024-12-29T23:59:00Z',
      '2024-12-30T00:00:00Z',
      '2025-06-30T23:00:00Z',
      '2025-07-01T00:00:00Z',
      '2025-11-30T12:00:00Z',
    ];
    await record(instants.map((ts, i) => click(edges, ts, { visitor: `visitor-${i}` })));
    for (const timeBucket of ['hour', 'day', 'week', 'month']) {
      const query =
        timeBucket === 'hour'
          ? { startDate: '2024-02-29T20:00:00Z', endDate: '2024-03-01T03:00:00Z', timeBucket }
          : { startDate: '2023-12-27', endDate: '2025-12-02', timeBucket };
      const report = (await get(`/api/analytics/links/${edges}`, query)).json().data.analytics;
      expect(
        report.timeSeries.reduce((n: number, p: { clicks: number }) => n + p.clicks, 0),
        timeBucket,
      ).toBe(report.totalClicks);
      expect(fromRows(await exportCsv(edges, query)).timeSeries, timeBucket).toEqual(withoutUniques(report.timeSeries));
    }
  });

  it('refuses bad parameters and foreign or unknown links with the error envelope', async () => {
    const cases: [string, Record<string, string>, number, string, string?][] = [
      [id, { format: 'xml' }, 400, 'INVALID_REQUEST', 'format'],
      [id, { timeBucket: 'year' }, 400, 'INVALID_REQUEST', 'timeBucket'],
      [id, { startDate: '2026-03-05', endDate: '2026-03-01' }, 400, 'INVALID_REQUEST', 'startDate'],
      [id, { startDate: '2020-01-01', endDate: '2026-01-01', timeBucket: 'hour' }, 400, 'INVALID_REQUEST', 'timeBucket'],
      [await createLink((await api.registerUser('Other')).token), {}, 403, 'FORBIDDEN'],
      ['00000000-0000-4000-8000-000000000000', {}, 404, 'NOT_FOUND'],
    ];
    for (const [linkId, query, status, code, field] of cases) {
      const response = await get(`/api/analytics/links/${linkId}/export`, query);
      expect(response.statusCode, JSON.stringify(query)).toBe(status);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(response.headers['content-disposition']).toBeUndefined();
      expect(response.json().error.code).toBe(code);
      if (field) expect(response.json().error.details.map((d: { field: string }) => d.field)).toEqual([field]);
    }
  });

  it('is described in the OpenAPI document with both media types', async () => {
    const doc = (await api.request({ method: 'GET', url: '/api/docs/json' })).json();
    const operation = doc.paths['/api/analytics/links/{id}/export'].get;
    expect(operation.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['id', 'startDate', 'endDate', 'timeBucket', 'format']),
    );
    expect(Object.keys(operation.responses['200'].content)).toEqual(['text/csv', 'application/json']);
    // The long layout's rows or the wide layout's (openapi-contract.test.ts validates real files of each).
    expect(
      operation.responses['200'].content['application/json'].schema.anyOf.map((schema: { items: { $ref: string } }) => schema.items.$ref),
    ).toEqual(['#/components/schemas/AnalyticsExportRow', '#/components/schemas/AnalyticsWideExportRow']);
    expect(doc.components.schemas.AnalyticsExportRow).toBeDefined();
    // Errors are the usual JSON envelope, never CSV.
    expect(Object.keys(operation.responses['400'].content)).toEqual(['application/json']);
    expect(doc.paths['/api/analytics/links/{id}'].get.responses['200']).toBeDefined();
    expect(doc.paths['/api/analytics/summary'].get.responses['200']).toBeDefined();
  });
});
