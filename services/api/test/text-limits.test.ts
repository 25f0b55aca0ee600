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

describe('text no column can store, in every free-text field', () => {
  const NUL = 'a\u0000b';
  const LONE_SURROGATE = 'a\ud800b';
  const NOT_UNICODE = 'must be valid Unicode text (no unpaired surrogate)';

  it('refuses NUL with 400 naming the field: registration name, API key name, app name, social preview', async () => {
    const register = await api.request({
      method: 'POST',
      url: '/api/auth/register',
      payload: { name: NUL, email: `nul-${Date.now()}@example.com`, password: 'correct horse battery' },
    });
    expect(register.statusCode).toBe(400);
    expect(register.json().error.details).toEqual([{ field: 'name', message: 'must not contain NUL characters' }]);
    const user = await api.registerUser();
    const key = await api.request({ method: 'POST', url: '/api/auth/api-keys', token: user.token, payload: { name: NUL } });
    expect(key.statusCode).toBe(400);
    expect(key.json().error.details).toEqual([{ field: 'name', message: 'must not contain NUL characters' }]);
    const app = await api.request({
      method: 'POST',
      url: '/api/apps',
      token: user.token,
      payload: { platform: 'ios', name: NUL, teamId: 'ABCDE12345', bundleId: 'com.example.nul' },
    });
    expect(app.statusCode).toBe(400);
    expect(app.json().error.details).toEqual([{ field: 'name', message: 'must not contain NUL characters' }]);
    for (const field of ['title', 'description']) {
      const socialPreview = { title: 'Preview', [field]: NUL };
      const created = await api.request({ method: 'POST', url: '/api/links', token: user.token, payload: item(10, { socialPreview }) });
      expect(created.statusCode).toBe(400);
      expect(created.json().error.details).toEqual([{ field: `socialPreview.${field}`, message: 'must not contain NUL characters' }]);
    }
  });

  it('refuses unpaired UTF-16 surrogates with 400 naming the field: social preview, custom parameter names and values', async () => {
    const user = await api.registerUser();
    const link = (await api.request({ method: 'POST', url: '/api/links', token: user.token, payload: item(20) })).json().data.link;
    const cases: [Record<string, unknown>, string, string?][] = [
      [{ socialPreview: { title: LONE_SURROGATE } }, 'socialPreview.title'],
      [{ socialPreview: { title: 'Preview', description: '\udc00' } }, 'socialPreview.description'],
      [{ customParameters: { [LONE_SURROGATE]: 'x' } }, `customParameters.${LONE_SURROGATE}`, `name ${NOT_UNICODE}`],
      [{ customParameters: { utm_source: LONE_SURROGATE } }, 'customParameters.utm_source'],
      [{ title: LONE_SURROGATE }, 'title'],
    ];
    for (const [fields, field, message = NOT_UNICODE] of cases) {
      // JSON.stringify escapes a lone surrogate as \ud800, exactly as a client would send it.
      for (const [method, url, payload] of [
        ['POST', '/api/links', item(21, fields)],
        ['PUT', `/api/links/${link.id}`, fields],
      ] as const) {
        const response = await api.request({
          method,
          url,
          token: user.token,
          payload: JSON.stringify(payload),
          headers: { 'content-type': 'application/json' },
        });
        expect(response.statusCode, `${method} ${JSON.stringify(fields)}`).toBe(400);
        expect(response.json().error.details).toContainEqual({ field, message });
      }
    }
    // Surrogate pairs (emoji) are ordinary text.
    const emoji = await api.request({
      method: 'POST',
      url: '/api/links',
      token: user.token,
      payload: item(22, { title: 'Spring 😀', socialPreview: { title: '😀' }, customParameters: { '😀': '😀' } }),
    });
    expect(emoji.statusCode).toBe(201);
    expect(emoji.json().data.link.customParameters).toEqual({ '😀': '😀' });
  });
});

describe('dates at the edges of the calendar', () => {
  it('answers endDate=0001-01-01 without startDate with 400 naming endDate, on the report, the summary and both exports', async () => {
    const user = await api.registerUser();
    const link = (await api.request({ method: 'POST', url: '/api/links', token: user.token, payload: item(30) })).json().data.link;
    for (const path of [
      `/api/analytics/links/${link.id}`,
      '/api/analytics/summary',
      `/api/analytics/links/${link.id}/export`,
      '/api/analytics/export',
    ]) {
      const response = await api.request({ method: 'GET', url: `${path}?endDate=0001-01-01`, token: user.token });
      expect(response.statusCode, path).toBe(400);
      expect(response.json().error.details, path).toEqual([
        {
          field: 'endDate',
          message: 'is too early: the default range of 30 days before it would start before the year 1; give startDate too',
        },
      ]);
    }
  });

  it('answers a range starting before the year 1 in the chosen zone with 400 naming startDate', async () => {
    const user = await api.registerUser();
    const link = (await api.request({ method: 'POST', url: '/api/links', token: user.token, payload: item(31) })).json().data.link;
    const response = await api.request({
      method: 'GET',
      url: `/api/analytics/links/${link.id}?startDate=0001-01-01&endDate=0001-01-02&timezone=Etc/GMT-10`,
      token: user.token,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.details).toEqual([{ field: 'startDate', message: 'must not be before 0001-01-01T00:00:00Z' }]);
    const first = await api.request({
      method: 'GET',
      url: `/api/analytics/links/${link.id}?startDate=0001-01-01&endDate=0001-01-02`,
      token: user.token,
    });
    expect(first.statusCode).toBe(200);
    expect(first.json().data.analytics.range.startDate).toBe('0001-01-01T00:00:00.000Z');
  });
});

describe('expiry dates at the edges of the calendar', () => {
  it('keeps every accepted expiry within the years 0001-9999 as an instant, or refuses it naming expirationDate', async () => {
    const user = await api.registerUser();
    for (const expirationDate of ['9999-12-31T23:59:59-14:00', '0001-01-01T00:00:00+14:00', '9999-12-31', '0001-01-01']) {
      const response = await api.request({ method: 'POST', url: '/api/links', token: user.token, payload: item(40, { expirationDate }) });
      expect(response.statusCode, expirationDate).toBeLessThan(500);
      if (response.statusCode === 201) expect(response.json().data.link.expirationDate, expirationDate).toMatch(/^\d{4}-/);
      else expect(response.json().error.details[0].field, expirationDate).toBe('expirationDate');
    }
  });
});
