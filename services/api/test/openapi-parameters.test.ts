import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiHarness, type ApiHarness } from './harness.js';

let api: ApiHarness;
beforeAll(async () => {
  api = await createApiHarness();
});
afterAll(() => api.close());

interface Parameter {
  name: string;
  in: string;
  description?: string;
  example?: unknown;
  schema?: { example?: unknown; examples?: unknown[] };
}

describe('OpenAPI document', () => {
  it('describes every path and query parameter, each with an example', async () => {
    const doc = (await api.request({ method: 'GET', url: '/api/docs/json' })).json();
    const parameters: [string, Parameter][] = [];
    for (const [path, operations] of Object.entries(doc.paths as Record<string, Record<string, { parameters?: Parameter[] }>>)) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const parameter of operation.parameters ?? [])
          parameters.push([`${method.toUpperCase()} ${path} ${parameter.in}:${parameter.name}`, parameter]);
      }
    }
    expect(parameters.length).toBeGreaterThanOrEqual(17 + 13);
    const undescribed = parameters.filter(([, p]) => !p.description).map(([name]) => name);
    const withoutExample = parameters
      .filter(([, p]) => p.example === undefined && p.schema?.example === undefined && !p.schema?.examples?.length)
      .map(([name]) => name);
    expect(undescribed).toEqual([]);
    expect(withoutExample).toEqual([]);
  });

  it('documents the new operations and fields', async () => {
    const doc = (await api.request({ method: 'GET', url: '/api/docs/json' })).json();
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/api/links/bulk', '/api/analytics/export']));
    const series = doc.components.schemas.LinkAnalytics.properties.timeSeries.items.properties;
    expect(series.uniqueClicks.description).toMatch(/sketches merged/);
    expect(series.uniqueClicks.example).toBe(30);
    const bulk = doc.paths['/api/links/bulk'].post.requestBody.content['application/json'].schema.properties.links;
    expect(bulk.description).toMatch(/one transaction/);
    expect(bulk.example).toHaveLength(2);
  });
});
