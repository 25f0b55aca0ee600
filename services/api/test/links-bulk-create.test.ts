import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiHarness, type ApiHarness } from './harness.js';

let api: ApiHarness;
beforeAll(async () => {
  api = await createApiHarness();
});
afterAll(() => api.close());

const bulk = (token: string, links: unknown[]) => api.request({ method: 'POST', url: '/api/links/bulk', token, payload: { links } });
const cached = (code: string) => api.env.redis.get(`${api.env.config.REDIS_PREFIX}link:${code}`);
const countLinks = async (userId: string) =>
  (await api.env.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM links WHERE user_id = ${userId}`)[0]!.n;
const item = (n: number, extra: Record<string, unknown> = {}) => ({ title: `Link ${n}`, defaultUrl: `https://example.com/${n}`, ...extra });

describe('POST /links/bulk', () => {
  it('creates every link, in order, each readable and cached for the redirector', async () => {
    const user = await api.registerUser();
    const response = await bulk(user.token, [item(0, { tags: ['Spring'] }), item(1, { slug: 'bulk-one' }), item(2)]);
    expect(response.statusCode, response.body).toBe(201);
    const { links } = response.json().data;
    expect(links.map((link: { title: string }) => link.title)).toEqual(['Link 0', 'Link 1', 'Link 2']);
    expect(links[0].tags).toEqual(['spring']);
    expect(links[1].url.endsWith('/bulk-one')).toBe(true);
    for (const link of links) {
      const got = await api.request({ method: 'GET', url: `/api/links/${link.id}`, token: user.token });
      expect(got.json().data.link).toEqual(link);
      expect(JSON.parse((await cached(link.url.split('/').pop()))!)).toMatchObject({ id: link.id, defaultUrl: link.defaultUrl });
    }
  });

  it('creates nothing, in the database or the cache, when one link is invalid, naming it by index', async () => {
    const user = await api.registerUser();
    const response = await bulk(user.token, [
      item(0, { slug: 'bulk-good-0' }),
      item(1, { slug: 'bulk-good-1' }),
      item(2),
      item(3, { defaultUrl: 'javascript:alert(1)' }),
    ]);
    expect(response.statusCode).toBe(400);
    expect(response.json().error.code).toBe('INVALID_REQUEST');
    expect(response.json().error.details).toEqual([{ field: 'links.3.defaultUrl', message: expect.any(String) }]);
    expect(await countLinks(user.id)).toBe(0);
    expect(await cached('bulk-good-0')).toBeNull();
    expect(await cached('bulk-good-1')).toBeNull();
  });

  it('rolls back the links already inserted when a later slug is taken: 409 naming it, nothing created or cached', async () => {
    const user = await api.registerUser();
    expect((await bulk(user.token, [item(0, { slug: 'bulk-taken' })])).statusCode).toBe(201);
    const response = await bulk(user.token, [item(1, { slug: 'bulk-fresh' }), item(2), item(3, { slug: 'bulk-taken' })]);
    expect(response.statusCode).toBe(409);
    expect(response.json().error.details).toEqual([{ field: 'links.2.slug', message: 'is already taken' }]);
    expect(await countLinks(user.id)).toBe(1);
    expect(await cached('bulk-fresh')).toBeNull();

    const twice = await bulk(user.token, [item(4, { slug: 'bulk-twice' }), item(5, { slug: 'bulk-twice' })]);
    expect(twice.statusCode).toBe(400);
    expect(twice.json().error.details).toEqual([{ field: 'links.1.slug', message: 'is the slug of links.0 too' }]);
    expect(await countLinks(user.id)).toBe(1);
  });

  it('refuses an empty list, more than 100 links and a destination too long with its parameters', async () => {
    const user = await api.registerUser();
    expect((await bulk(user.token, [])).json().error.details[0].field).toBe('links');
    expect(
      (
        await bulk(
          user.token,
          Array.from({ length: 101 }, (_, n) => item(n)),
        )
      ).json().error.details[0].field,
    ).toBe('links');
    const long = item(1, { defaultUrl: `https://example.com/${'a'.repeat(1900)}`, customParameters: { q: 'b'.repeat(400) } });
    const response = await bulk(user.token, [item(0), long]);
    expect(response.statusCode).toBe(400);
    expect(response.json().error.details[0].field).toBe('links.1.defaultUrl');
    expect(await countLinks(user.id)).toBe(0);
  });
});

describe('POST /links/bulk and the rate limit', () => {
  let limited: ApiHarness;
  beforeAll(async () => {
    limited = await createApiHarness({ env: { RATE_LIMIT_MAX: '6' } });
  });
  afterAll(() => limited?.close());

  it('counts one request per link created', async () => {
    const user = await limited.registerUser();
    const send = (n: number) =>
      limited.request({
        method: 'POST',
        url: '/api/links/bulk',
        token: user.token,
        payload: { links: Array.from({ length: n }, (_, i) => item(i)) },
      });
    expect((await send(4)).statusCode).toBe(201);
    // 4 used; 3 more would make 7 of 6.
    const refused = await send(3);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.code).toBe('RATE_LIMITED');
    const [row] = await limited.env.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM links WHERE user_id = ${user.id}`;
    expect(row!.n).toBe(4);
  });
});
