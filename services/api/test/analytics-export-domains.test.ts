import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from '@deeplink/test-kit/dns-server';
import { recordClicks, rollupClick } from '@deeplink/test-kit/rollups';
import { createApiHarness, type ApiHarness } from './harness.js';

let dns: DnsServer;
let api: ApiHarness;
let owner: { token: string };
let onDomain: { id: string; url: string };
let onDefault: { id: string; url: string };
const range = { startDate: '2026-03-01', endDate: '2026-03-02' };

beforeAll(async () => {
  dns = await startDnsServer();
  api = await createApiHarness({ env: { DNS_SERVERS: dns.address } });
  owner = await api.registerUser('Domain owner');
  const domain = (
    await api.request({ method: 'POST', url: '/api/domains', token: owner.token, payload: { hostname: 'go.export.test' } })
  ).json().data.domain;
  dns.records.set(domain.verification.name, [domain.verification.value]);
  expect(
    (await api.request({ method: 'POST', url: `/api/domains/${domain.id}/verify`, token: owner.token })).json().data.domain.status,
  ).toBe('active');
  const create = async (token: string, payload: Record<string, unknown>) =>
    (
      await api.request({
        method: 'POST',
        url: '/api/links',
        token,
        payload: { title: 'Sale', defaultUrl: 'https://example.com/', ...payload },
      })
    ).json().data.link;
  onDomain = await create(owner.token, { slug: 'spring-sale', domain: 'go.export.test', tags: ['spring'] });
  onDefault = await create(owner.token, { tags: ['spring'] });
  // Another account holds the same code on the default domain: a short_url without the custom
  // domain would point at their link.
  const stranger = await api.registerUser('Stranger');
  expect((await create(stranger.token, { slug: 'spring-sale' })).url).toMatch(/\/spring-sale$/);
  await recordClicks(api.env.sql, [rollupClick(onDomain.id, '2026-03-01T10:00:00Z'), rollupClick(onDefault.id, '2026-03-01T11:00:00Z')]);
});
afterAll(async () => {
  await api?.close();
  await dns?.close();
});

const get = (url: string, query: Record<string, string>) =>
  api.request({ method: 'GET', url: `${url}?${new URLSearchParams(query)}`, token: owner.token });

describe('short_url in wide exports', () => {
  it("is the link's own short URL, on its custom domain, in the account export (CSV and JSON) and the per-link export", async () => {
    expect(onDomain.url).toBe('http://go.export.test/spring-sale');
    const shortUrls = (rows: Record<string, unknown>[]) => Object.fromEntries(rows.map((row) => [row.link_id, row.short_url]));
    const expected = { [onDomain.id]: onDomain.url, [onDefault.id]: onDefault.url };
    const csv = parse((await get('/api/analytics/export', { ...range, layout: 'wide', format: 'csv' })).body, { columns: true }) as Record<
      string,
      string
    >[];
    expect(shortUrls(csv)).toEqual(expected);
    const json = (await get('/api/analytics/export', { ...range, layout: 'wide', format: 'json', tag: 'spring' })).json();
    expect(shortUrls(json)).toEqual(expected);
    const own = (await get(`/api/analytics/links/${onDomain.id}/export`, { ...range, layout: 'wide', format: 'json' })).json();
    expect(own.map((row: { short_url: string }) => row.short_url)).toEqual([onDomain.url, onDomain.url]);
    expect(own.map((row: { clicks: number }) => row.clicks)).toEqual([1, 0]);
  });
});
