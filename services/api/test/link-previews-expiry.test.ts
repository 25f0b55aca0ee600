// A link's expiredUrl and socialPreview: stored, merged by PUT, validated, and cached for the redirector.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiHarness, type ApiHarness } from './harness.js';

let api: ApiHarness;
let owner: { id: string; token: string };
beforeAll(async () => {
  api = await createApiHarness();
  owner = await api.registerUser('Previewer');
});
afterAll(() => api.close());

const create = (payload: Record<string, unknown>) =>
  api.request({
    method: 'POST',
    url: '/api/links',
    token: owner.token,
    payload: { title: 'Sale', defaultUrl: 'https://example.com/x', ...payload },
  });
const cached = async (url: string) => JSON.parse((await api.env.redis.get(`${api.env.config.REDIS_PREFIX}link:${url.split('/').pop()}`))!);

describe('expiredUrl and socialPreview', () => {
  it('are returned with the link, cached for the redirector, merged by PUT and cleared by null', async () => {
    const preview = { title: 'Spring sale', description: 'Everything 20% off', imageUrl: 'https://cdn.example.com/s.png' };
    const response = await create({ expiredUrl: 'https://example.com/over', socialPreview: preview });
    expect(response.statusCode, response.body).toBe(201);
    const link = response.json().data.link;
    expect(link.expiredUrl).toBe('https://example.com/over');
    expect(link.socialPreview).toEqual(preview);
    expect(await cached(link.url)).toMatchObject({ expiredUrl: 'https://example.com/over', socialPreview: preview });

    const patched = await api.request({
      method: 'PUT',
      url: `/api/links/${link.id}`,
      token: owner.token,
      payload: { socialPreview: { description: null, title: 'Summer sale' }, expiredUrl: null },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    const updated = patched.json().data.link;
    expect(updated.socialPreview).toEqual({ title: 'Summer sale', imageUrl: 'https://cdn.example.com/s.png' });
    expect(updated).not.toHaveProperty('expiredUrl');
    const record = await cached(link.url);
    expect(record.socialPreview).toEqual({ title: 'Summer sale', imageUrl: 'https://cdn.example.com/s.png' });
    expect(record).not.toHaveProperty('expiredUrl');

    const cleared = await api.request({
      method: 'PUT',
      url: `/api/links/${link.id}`,
      token: owner.token,
      payload: { socialPreview: null },
    });
    expect(cleared.json().data.link).not.toHaveProperty('socialPreview');
  });

  it('leaves links without them answering as before', async () => {
    const link = (await create({})).json().data.link;
    expect(link).not.toHaveProperty('expiredUrl');
    expect(link).not.toHaveProperty('socialPreview');
  });

  it('refuses script destinations and malformed previews, naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ expiredUrl: 'javascript:alert(1)' }, 'expiredUrl'],
      [{ socialPreview: { description: 'no title' } }, 'socialPreview.title'],
      [{ socialPreview: { title: 'x', imageUrl: 'data:image/png;base64,AAAA' } }, 'socialPreview.imageUrl'],
      [{ socialPreview: { title: 'x', colour: 'red' } }, 'socialPreview.colour'],
      [{ socialPreview: { title: 'x'.repeat(201) } }, 'socialPreview.title'],
    ];
    for (const [payload, field] of cases) {
      const response = await create(payload);
      expect(response.statusCode, JSON.stringify(payload)).toBe(400);
      const error = response.json().error;
      expect(error.code).toBe('INVALID_REQUEST');
      expect(
        error.details.map((detail: { field: string }) => detail.field),
        JSON.stringify(payload),
      ).toContain(field);
    }
  });
});
