// GET /api/links/slug-availability: what the link form asks as a back-half is typed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from '@deeplink/test-kit/dns-server';
import { createApiHarness, type ApiHarness } from './harness.js';

let api: ApiHarness;
let dns: DnsServer;
let owner: { token: string };
let stranger: { token: string };

beforeAll(async () => {
  dns = await startDnsServer();
  api = await createApiHarness({ env: { DNS_SERVERS: dns.address } });
  owner = await api.registerUser('Slugs');
  stranger = await api.registerUser('Stranger');
});
afterAll(async () => {
  await api?.close();
  await dns?.close();
});

const ask = (query: string, token = owner.token) => api.request({ method: 'GET', url: `/api/links/slug-availability?${query}`, token });

describe('slug availability', () => {
  it('says whether a slug is free on the default domain and on an active domain of yours, with the short URL it would be', async () => {
    const free = await ask('slug=summer-26');
    expect(free.statusCode).toBe(200);
    expect(free.json().data).toEqual({ slug: 'summer-26', available: true, url: expect.stringMatching(/\/summer-26$/) });

    const link = (
      await api.request({
        method: 'POST',
        url: '/api/links',
        token: stranger.token,
        payload: { title: 'Taken', defaultUrl: 'https://example.com/', slug: 'summer-26' },
      })
    ).json().data.link;
    // Taken on the default domain by anyone: creating it would be refused too.
    expect((await ask('slug=summer-26')).json().data).toMatchObject({ available: false, url: link.url });

    const domain = (
      await api.request({ method: 'POST', url: '/api/domains', token: owner.token, payload: { hostname: 'go.slugs.test' } })
    ).json().data.domain;
    // A pending domain is not one a link can use.
    expect((await ask('slug=summer-26&domain=go.slugs.test')).json().error.details).toEqual([
      { field: 'domain', message: 'is not an active domain of yours' },
    ]);
    dns.records.set(domain.verification.name, [domain.verification.value]);
    await api.request({ method: 'POST', url: `/api/domains/${domain.id}/verify`, token: owner.token });
    expect((await ask('slug=summer-26&domain=go.slugs.test')).json().data).toEqual({
      slug: 'summer-26',
      domain: 'go.slugs.test',
      available: true,
      url: expect.stringMatching(/^https?:\/\/go\.slugs\.test\/summer-26$/),
    });
    // Another account cannot ask about your domain.
    expect((await ask('slug=summer-26&domain=go.slugs.test', stranger.token)).statusCode).toBe(400);
  });

  it('refuses a slug no link could have, naming the field, and needs credentials', async () => {
    for (const [slug, message] of [
      ['ab', /3-64 letters/],
      ['api', /reserved/],
      ['with space', /3-64 letters/],
    ] as const) {
      const response = await ask(`slug=${encodeURIComponent(slug)}`);
      expect(response.statusCode, slug).toBe(400);
      expect(response.json().error.details).toEqual([{ field: 'slug', message: expect.stringMatching(message) }]);
    }
    expect((await api.request({ method: 'GET', url: '/api/links/slug-availability?slug=fine-one' })).statusCode).toBe(401);
  });
});
