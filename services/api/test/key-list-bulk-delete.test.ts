import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiHarness, type ApiHarness } from './harness.js';

let api: ApiHarness;
beforeAll(async () => {
  api = await createApiHarness();
});
afterAll(() => api.close());

const createLink = async (token: string, title: string) =>
  (await api.request({ method: 'POST', url: '/api/links', token, payload: { title, defaultUrl: 'https://example.com' } })).json().data.link;

describe('GET /auth/api-keys', () => {
  it('lists keys without secrets, and moves lastUsedAt at most once a minute', async () => {
    const user = await api.registerUser();
    const created = (await api.request({ method: 'POST', url: '/api/auth/api-keys', token: user.token, payload: { name: 'ci' } })).json()
      .data.apiKey;
    const listKeys = async () => (await api.request({ method: 'GET', url: '/api/auth/api-keys', token: user.token })).json().data.apiKeys;
    const [before] = await listKeys();
    expect(before).toEqual({
      id: created.id,
      name: 'ci',
      prefix: created.key.slice(0, 12),
      createdAt: created.createdAt,
      lastUsedAt: null,
    });
    expect(JSON.stringify(await listKeys())).not.toContain(created.key);

    expect((await api.request({ method: 'GET', url: '/api/auth/me', token: created.key })).statusCode).toBe(200);
    const [used] = await listKeys();
    expect(used.lastUsedAt).not.toBeNull();
    await api.request({ method: 'GET', url: '/api/auth/me', token: created.key });
    expect((await listKeys())[0].lastUsedAt).toBe(used.lastUsedAt);

    await api.env.sql`UPDATE api_keys SET last_used_at = now() - interval '2 minutes' WHERE id = ${created.id}`;
    const [aged] = await listKeys();
    await api.request({ method: 'GET', url: '/api/auth/me', token: created.key });
    const [moved] = await listKeys();
    expect(Date.parse(moved.lastUsedAt)).toBeGreaterThan(Date.parse(aged.lastUsedAt));
  });

  it('gives lastUsedAt to the minute, as documented', async () => {
    const user = await api.registerUser();
    const created = (await api.request({ method: 'POST', url: '/api/auth/api-keys', token: user.token, payload: { name: 'ci' } })).json()
      .data.apiKey;
    await api.env.sql`UPDATE api_keys SET last_used_at = '2026-11-22T10:15:42.123Z' WHERE id = ${created.id}`;
    const [key] = (await api.request({ method: 'GET', url: '/api/auth/api-keys', token: user.token })).json().data.apiKeys;
    expect(key.lastUsedAt).toBe('2026-11-22T10:15:00.000Z');
  });
});

describe('POST /links/bulk-delete', () => {
  it("deletes the caller's links and their cache entries, skipping unknown ids", async () => {
    const user = await api.registerUser();
    const a = await createLink(user.token, 'a');
    const b = await createLink(user.token, 'b');
    const keep = await createLink(user.token, 'keep');
    const response = await api.request({
      method: 'POST',
      url: '/api/links/bulk-delete',
      token: user.token,
      payload: { ids: [a.id, b.id, 'not-a-uuid', '00000000-0000-4000-8000-000000000000'] },
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ success: true, data: { deleted: 2 } });
    expect(await api.env.redis.get(`${api.env.config.REDIS_PREFIX}link:${a.url.split('/').pop()}`)).toBeNull();
    expect((await api.request({ method: 'GET', url: `/api/links/${keep.id}`, token: user.token })).statusCode).toBe(200);
  });

  it("deletes nothing when any id is another account's (403 naming it)", async () => {
    const user = await api.registerUser();
    const other = await api.registerUser();
    const mine = await createLink(user.token, 'mine');
    const theirs = await createLink(other.token, 'theirs');
    const response = await api.request({
      method: 'POST',
      url: '/api/links/bulk-delete',
      token: user.token,
      payload: { ids: [mine.id, theirs.id] },
    });
    expect(response.statusCode).toBe(403);
    expect(response.json().error).toMatchObject({
      code: 'FORBIDDEN',
      details: [{ field: 'ids.1', message: 'belongs to another account' }],
    });
    expect((await api.request({ method: 'GET', url: `/api/links/${mine.id}`, token: user.token })).statusCode).toBe(200);
    expect((await api.request({ method: 'GET', url: `/api/links/${theirs.id}`, token: other.token })).statusCode).toBe(200);
  });

  it('counts once against the rate limit per link named', async () => {
    const user = await api.registerUser();
    const ids = await Promise.all(['a', 'b', 'c'].map(async (t) => (await createLink(user.token, t)).id));
    const first = await api.request({ method: 'GET', url: '/api/links', token: user.token });
    const remaining = Number(first.headers['x-ratelimit-remaining']);
    const response = await api.request({ method: 'POST', url: '/api/links/bulk-delete', token: user.token, payload: { ids } });
    expect(response.statusCode).toBe(200);
    expect(Number(response.headers['x-ratelimit-remaining'])).toBe(remaining - 3);
    const empty = await api.request({ method: 'POST', url: '/api/links/bulk-delete', token: user.token, payload: { ids: [] } });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().error.details[0].field).toBe('ids');
  });
});
