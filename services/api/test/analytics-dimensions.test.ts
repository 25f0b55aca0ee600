// Walks the dimension registry and checks that every dimension reaches each place that shows
// clicks: the response schemas and the OpenAPI document, the link report, the summary, and both
// export layouts. A dimension added to the registry but missed somewhere fails here if it did not
// fail to compile. The dashboard's list is checked in services/dashboard/test/breakdowns.test.ts.
import {
  DIMENSION_NAMES,
  DIMENSIONS,
  type DimensionSpec,
  linkAnalyticsSchema,
  summaryAnalyticsSchema,
  WIDE_FIXED_COLUMNS,
} from '@deeplink/core';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordClicks, rollupClick } from '@deeplink/test-kit/rollups';
import { createApiHarness, type ApiHarness } from './harness.js';

let api: ApiHarness;
let token: string;
let linkId: string;
const range = { startDate: '2026-03-01', endDate: '2026-03-01' };

/** The value one click has in a dimension: a fixed dimension's first value, else a name of the test's own. */
const clickValue = (spec: DimensionSpec, name: string) =>
  spec.values.kind === 'fixed' ? Object.keys(spec.values.values)[0]! : `walked-${name}`;
const CLICK = Object.fromEntries(DIMENSION_NAMES.map((name) => [name, clickValue(DIMENSIONS[name], name)]));

beforeAll(async () => {
  api = await createApiHarness();
  ({ token } = await api.registerUser('Walker'));
  const created = await api.request({
    method: 'POST',
    url: '/api/links',
    token,
    payload: { title: 'Walked', defaultUrl: 'https://example.com' },
  });
  linkId = created.json().data.link.id;
  await recordClicks(api.env.sql, [rollupClick(linkId, '2026-03-01T10:00:00Z', CLICK), rollupClick(linkId, '2026-03-01T11:00:00Z', CLICK)]);
});
afterAll(async () => {
  await api?.close();
});

const get = (url: string, query: Record<string, string> = {}) =>
  api.request({ method: 'GET', url: `${url}?${new URLSearchParams(query)}`, token });

describe.each(DIMENSION_NAMES)('the %s dimension', (name) => {
  const spec: DimensionSpec = DIMENSIONS[name];
  const value = clickValue(spec, name);

  it('is a breakdown of the report and summary schemas, and of the OpenAPI document', async () => {
    expect(linkAnalyticsSchema.shape).toHaveProperty(spec.response);
    expect(summaryAnalyticsSchema.shape).toHaveProperty(spec.response);
    const doc = (await api.request({ method: 'GET', url: '/api/docs/json' })).json();
    expect(doc.components.schemas.LinkAnalytics.required).toContain(spec.response);
    // The summary's breakdowns are there when asked for (breakdowns=true).
    expect(doc.components.schemas.SummaryAnalytics.required).not.toContain(spec.response);
    for (const schema of ['LinkAnalytics', 'SummaryAnalytics'])
      expect(doc.components.schemas[schema].properties[spec.response].type).toBe('object');
  });

  it("counts the link's clicks in the report and in the summary, with every fixed value listed", async () => {
    const report = (await get(`/api/analytics/links/${linkId}`, range)).json().data.analytics;
    const summary = (await get('/api/analytics/summary', { ...range, breakdowns: 'true' })).json().data.summary;
    const expected =
      spec.values.kind === 'fixed'
        ? { ...Object.fromEntries(Object.keys(spec.values.values).map((v) => [v, 0])), [value]: 2 }
        : { [value]: 2 };
    expect(report[spec.response]).toEqual(expected);
    expect(summary[spec.response]).toEqual(expected);
    expect((await get('/api/analytics/summary', range)).json().data.summary).not.toHaveProperty(spec.response);
  });

  it('has rows of its own in the long export', async () => {
    const rows = (await get(`/api/analytics/links/${linkId}/export`, { ...range, format: 'json' })).json();
    expect(rows.filter((row: { dimension: string }) => row.dimension === name)).toEqual([
      { bucket: '2026-03-01T00:00:00.000Z', dimension: name, value, clicks: 2 },
    ]);
  });

  it('has its columns in the wide export, as CSV and JSON', async () => {
    const column = spec.values.kind === 'fixed' ? spec.values.values[value]!.wideColumn : `${spec.values.widePrefix}${value}`;
    const json = (await get(`/api/analytics/links/${linkId}/export`, { ...range, layout: 'wide', format: 'json' })).json();
    expect(json[0][column]).toBe(2);
    const csv: Record<string, string>[] = parse((await get(`/api/analytics/links/${linkId}/export`, { ...range, layout: 'wide' })).body, {
      columns: true,
    });
    expect(csv[0]?.[column]).toBe('2');
    if (spec.values.kind === 'fixed') {
      expect(WIDE_FIXED_COLUMNS).toEqual(expect.arrayContaining(Object.values(spec.values.values).map((v) => v.wideColumn)));
    } else {
      // The rest column is there even when nothing was folded into it.
      expect(json[0][`${spec.values.widePrefix}${spec.values.rest}`]).toBe(0);
    }
  });
});
