import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiHarness, type ApiHarness } from './harness.js';

let api: ApiHarness;
beforeAll(async () => {
  api = await createApiHarness();
});
afterAll(() => api.close());

const bulk = (token: string, links: unknown[]) => api.request({ method: 'POST', url: '/api/links/bulk', token, payload: { links } });
const item = (n: number, extra: Record<string, unknown> = {}) => ({ title: `Link ${n}`, defaultUrl: `https://example.com/${n}`, ...extra });

describe('text PostgreSQL cannot store', () => {
  it('refuses a NUL character with 400 naming the title, on create, update and bulk create', async () => {
    const user = await api.registerUser();
    const created = await api.request({ method: 'POST', url: '/api/links', token: user.token, payload: item(1, { title: 'a\u0000b' }) });
    expect(created.statusCode).toBe(400);
    expect(created.json().error.details).toEqual([{ field: 'title', message: 'must not contain NUL characters' }]);
    const link = (await api.request({ method: 'POST', url: '/api/links', token: user.token, payload: item(2) })).json().data.link;
    const updated = await api.request({ method: 'PUT', url: `/api/links/${link.id}`, token: user.token, payload: { title: '\u0000' } });
    expect(updated.statusCode).toBe(400);
    expect(updated.json().error.details[0].field).toBe('title');
    expect((await bulk(user.token, [item(3), item(4, { title: '\u0000' })])).json().error.details[0].field).toBe('links.1.title');
  });

  it('refuses a NUL character in the search text with 400 naming q', async () => {
    const user = await api.registerUser();
    const response = await api.request({ method: 'GET', url: '/api/links?q=a%00b', token: user.token });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.details).toEqual([{ field: 'q', message: 'must not contain NUL characters' }]);
  });
});
