// The open call from a browser (a web app, a Capacitor WebView): CORS preflight and headers on
// every answer of /app/open, and on nothing else of the API (real API, PostgreSQL, Redis).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiHarness, type ApiHarness } from './harness.js';

let api: ApiHarness;
let limited: ApiHarness;
beforeAll(async () => {
  api = await createApiHarness();
  limited = await createApiHarness({ env: { APP_RATE_LIMIT_ADDRESS_MAX: '2' } });
});
afterAll(async () => {
  await api?.close();
  await limited?.close();
});

const ORIGIN = 'capacitor://localhost';

/** A new account's app key and login token. */
async function appKey(harness: ApiHarness): Promise<{ key: string; token: string }> {
  const user = await harness.registerUser();
  const created = await harness.request({
    method: 'POST',
    url: '/api/apps',
    token: user.token,
    payload: { platform: 'ios', teamId: 'ABCDE12345', bundleId: `com.example.cors${Date.now()}` },
  });
  return { key: created.json().data.app.key, token: user.token };
}

describe('CORS on POST /app/open', () => {
  it('answers the preflight with the method and headers an open sends, without a key', async () => {
    const preflight = await api.request({
      method: 'OPTIONS',
      url: '/api/app/open',
      headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, x-app-key' },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers).toMatchObject({
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'POST',
      'access-control-allow-headers': 'content-type, x-app-key',
      'access-control-max-age': '600',
    });
    expect(preflight.body).toBe('');
  });

  it('lets the page read every answer: 200, 404, 401 and 400', async () => {
    const { key, token } = await appKey(api);
    const own = await api.request({
      method: 'POST',
      url: '/api/links',
      token,
      payload: { title: 'T', defaultUrl: 'https://example.com/' },
    });
    const other = await api.registerUser();
    const link = await api.request({
      method: 'POST',
      url: '/api/links',
      token: other.token,
      payload: { title: 'T', defaultUrl: 'https://example.com/' },
    });
    const answers = await Promise.all(
      [
        { key, url: own.json().data.link.url as string },
        { key, url: 'https://example.com/no-such-link' },
        { key: 'dla_unknown', url: 'https://example.com/abc' },
        { key, url: 'not a url' },
      ].map(({ key, url }) =>
        api.request({ method: 'POST', url: '/api/app/open', headers: { origin: ORIGIN, 'x-app-key': key }, payload: { url } }),
      ),
    );
    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 404, 401, 400]);
    for (const answer of answers) {
      expect(answer.headers['access-control-allow-origin']).toBe('*');
      expect(answer.headers['access-control-expose-headers']).toContain('Retry-After');
    }
    // Another account's link is still a 404: CORS opens the door to the call, not to more data.
    const foreign = await api.request({
      method: 'POST',
      url: '/api/app/open',
      headers: { origin: ORIGIN, 'x-app-key': key },
      payload: { url: link.json().data.link.url },
    });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.headers['access-control-allow-origin']).toBe('*');
  });

  it('gives the rest of the API no CORS headers', async () => {
    const user = await api.registerUser();
    const links = await api.request({ method: 'GET', url: '/api/links', token: user.token, headers: { origin: ORIGIN } });
    expect(links.statusCode).toBe(200);
    expect(links.headers).not.toHaveProperty('access-control-allow-origin');
    const preflight = await api.request({
      method: 'OPTIONS',
      url: '/api/links',
      headers: { origin: ORIGIN, 'access-control-request-method': 'GET' },
    });
    expect(preflight.statusCode).toBe(404);
    expect(preflight.headers).not.toHaveProperty('access-control-allow-origin');
  });

  it('counts preflights against the address limit, and its 429 is readable with Retry-After', async () => {
    const { key } = await appKey(limited);
    const preflight = () =>
      limited.request({ method: 'OPTIONS', url: '/api/app/open', headers: { origin: ORIGIN }, remoteAddress: '10.9.0.1' });
    expect((await preflight()).statusCode).toBe(204);
    expect((await preflight()).statusCode).toBe(204);
    const over = await preflight();
    expect(over.statusCode).toBe(429);
    expect(over.headers['access-control-allow-origin']).toBe('*');
    const open = await limited.request({
      method: 'POST',
      url: '/api/app/open',
      headers: { origin: ORIGIN, 'x-app-key': key },
      payload: { url: 'https://example.com/abc' },
      remoteAddress: '10.9.0.1',
    });
    expect(open.statusCode).toBe(429);
    expect(open.headers['access-control-allow-origin']).toBe('*');
    expect(Number(open.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });
});
