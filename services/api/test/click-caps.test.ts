import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisKeys } from '@deeplink/core';
import { createApiHarness, type ApiHarness } from './harness.js';

let api: ApiHarness;
let owner: { id: string; token: string };
beforeAll(async () => {
  api = await createApiHarness();
  owner = await api.registerUser('Owner');
});
afterAll(() => api.close());

const base = { title: 'Offer', defaultUrl: 'https://example.com/offer' };
const create = (payload: object) => api.request({ method: 'POST', url: '/api/links', token: owner.token, payload });
const update = (id: string, payload: object) => api.request({ method: 'PUT', url: `/api/links/${id}`, token: owner.token, payload });
const countKey = (id: string) => redisKeys(api.env.config.REDIS_PREFIX).linkClickCount(id);

async function created(payload: object) {
  const response = await create(payload);
  expect(response.statusCode).toBe(201);
  return response.json().data.link;
}

describe('click caps', () => {
  it('are answered and cached with their overflow URL, changed and removed by PUT', async () => {
    const link = await created({ ...base, clickCap: 100, capOverflowUrl: 'https://example.com/sold-out' });
    expect(link).toMatchObject({ clickCap: 100, capOverflowUrl: 'https://example.com/sold-out' });
    const code = link.url.split('/').pop();
    const record = async () => JSON.parse((await api.env.redis.get(`${api.env.config.REDIS_PREFIX}link:${code}`))!);
    expect(await record()).toMatchObject({ clickCap: 100, capOverflowUrl: 'https://example.com/sold-out' });

    const lowered = await update(link.id, { clickCap: 10 });
    expect(lowered.json().data.link).toMatchObject({ clickCap: 10, capOverflowUrl: 'https://example.com/sold-out' });
    const removed = await update(link.id, { clickCap: null, capOverflowUrl: null });
    expect(removed.statusCode).toBe(200);
    expect(removed.json().data.link).not.toHaveProperty('clickCap');
    expect(removed.json().data.link).not.toHaveProperty('capOverflowUrl');
    expect(await record()).not.toHaveProperty('clickCap');
  });

  it('refuse a cap that is not a positive integer up to 1e9, and an overflow URL that is not https', async () => {
    for (const clickCap of [0, -1, 1.5, '100', 1_000_000_001]) {
      const response = await create({ ...base, clickCap });
      expect(response.statusCode).toBe(400);
      expect(response.json().error.details).toEqual([{ field: 'clickCap', message: expect.any(String) }]);
    }
    for (const capOverflowUrl of ['http://example.com/sold-out', 'javascript:alert(1)', 'sold-out']) {
      const response = await create({ ...base, clickCap: 5, capOverflowUrl });
      expect(response.statusCode).toBe(400);
      expect(response.json().error.details).toEqual([{ field: 'capOverflowUrl', message: expect.any(String) }]);
    }
    const link = await created(base);
    const response = await update(link.id, { clickCap: 0 });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.details).toEqual([{ field: 'clickCap', message: 'must be a positive integer' }]);
  });

  it("drop a deleted link's count", async () => {
    const [one, two] = [await created({ ...base, clickCap: 5 }), await created({ ...base, clickCap: 5 })];
    for (const link of [one, two]) await api.env.redis.set(countKey(link.id), '3');
    expect((await api.request({ method: 'DELETE', url: `/api/links/${one.id}`, token: owner.token })).statusCode).toBe(200);
    expect(await api.env.redis.exists(countKey(one.id))).toBe(0);
    const bulk = await api.request({ method: 'POST', url: '/api/links/bulk-delete', token: owner.token, payload: { ids: [two.id] } });
    expect(bulk.statusCode).toBe(200);
    expect(await api.env.redis.exists(countKey(two.id))).toBe(0);
  });
});
