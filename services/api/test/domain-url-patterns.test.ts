// A custom domain's allowed URL patterns through the API: validated with an error per pattern,
// stored normalized, changed and cleared by PUT, and carried in the redirector's domain record.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisKeys } from '@deeplink/core';
import { startDnsServer, type DnsServer } from '@deeplink/test-kit/dns-server';
import { createApiHarness, type ApiHarness } from './harness.js';

let api: ApiHarness;
let dns: DnsServer;
let owner: { id: string; token: string };

beforeAll(async () => {
  dns = await startDnsServer();
  api = await createApiHarness({ env: { DNS_SERVERS: dns.address } });
  owner = await api.registerUser('Patterns');
});
afterAll(async () => {
  await api?.close();
  await dns?.close();
});

const create = (payload: object) => api.request({ method: 'POST', url: '/api/domains', token: owner.token, payload });
const update = (id: string, payload: object) => api.request({ method: 'PUT', url: `/api/domains/${id}`, token: owner.token, payload });
const cachedRecord = async (hostname: string) =>
  JSON.parse((await api.env.redis.get(redisKeys(api.env.config.REDIS_PREFIX).domain(hostname)))!);

describe('allowedUrlPatterns', () => {
  it('are stored normalized and without duplicates, answered with the domain, and empty by default', async () => {
    const created = await create({
      hostname: 'long.example.test',
      allowedUrlPatterns: ['HTTPS://Example.COM', 'https://example.com/', ' https://*.example.com/shop/* '],
    });
    expect(created.statusCode).toBe(201);
    expect(created.json().data.domain.allowedUrlPatterns).toEqual(['https://example.com/', 'https://*.example.com/shop/*']);
    const plain = await create({ hostname: 'plain.example.test' });
    expect(plain.json().data.domain.allowedUrlPatterns).toEqual([]);
  });

  it('refuse a bad pattern with an error naming its index', async () => {
    const refused = await create({
      hostname: 'bad.example.test',
      allowedUrlPatterns: ['https://example.com/*', '^https://example\\.com/.*$', 'https://exa mple.com/'],
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.details.map((d: { field: string }) => d.field)).toEqual(['allowedUrlPatterns.1', 'allowedUrlPatterns.2']);
    const tooMany = await create({
      hostname: 'many.example.test',
      allowedUrlPatterns: Array.from({ length: 51 }, (_, i) => `https://example.com/${i}`),
    });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json().error.details).toEqual([{ field: 'allowedUrlPatterns', message: 'must have at most 50 patterns' }]);
  });

  it('change by PUT, leaving what the body does not name, and reach the redirector with the owner once active', async () => {
    const domain = (await create({ hostname: 'put.example.test', notFoundUrl: 'https://example.com/404' })).json().data.domain;
    dns.records.set(domain.verification.name, [domain.verification.value]);
    await api.request({ method: 'POST', url: `/api/domains/${domain.id}/verify`, token: owner.token });
    expect(await cachedRecord('put.example.test')).not.toHaveProperty('allowedUrlPatterns');

    const changed = await update(domain.id, { allowedUrlPatterns: ['https://example.com/*'] });
    expect(changed.json().data.domain).toMatchObject({
      notFoundUrl: 'https://example.com/404',
      allowedUrlPatterns: ['https://example.com/*'],
    });
    expect(await cachedRecord('put.example.test')).toMatchObject({ allowedUrlPatterns: ['https://example.com/*'], userId: owner.id });

    const notFoundOnly = await update(domain.id, { notFoundUrl: null });
    expect(notFoundOnly.json().data.domain).not.toHaveProperty('notFoundUrl');
    expect(notFoundOnly.json().data.domain.allowedUrlPatterns).toEqual(['https://example.com/*']);

    const cleared = await update(domain.id, { allowedUrlPatterns: null });
    expect(cleared.json().data.domain.allowedUrlPatterns).toEqual([]);
    const record = await cachedRecord('put.example.test');
    expect(record).not.toHaveProperty('allowedUrlPatterns');
    expect(record).not.toHaveProperty('userId');
  });
});
