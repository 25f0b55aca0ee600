import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedis } from '@deeplink/core/redis';
import { createLogger } from '@deeplink/core/runtime';
import { buildApi } from '../src/app.js';
import { createApiHarness, type ApiHarness } from './harness.js';

let api: ApiHarness;
let user: { token: string };
beforeAll(async () => {
  api = await createApiHarness({
    env: { RATE_LIMIT_MAX: '5', RATE_LIMIT_ANONYMOUS_MAX: '3', RATE_LIMIT_AUTH_MAX: '4', RATE_LIMIT_WINDOW_SECONDS: '3600' },
  });
  user = await api.registerUser();
});
afterAll(() => api.close());

const remaining = (response: { headers: Record<string, unknown> }) => Number(response.headers['x-ratelimit-remaining']);

describe('rate limits', () => {
  it('counts down per user on every response, then answers 429 RATE_LIMITED with Retry-After', async () => {
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) {
      const response = await api.request({ method: 'GET', url: '/api/links', token: user.token });
      expect(response.statusCode).toBe(200);
      expect(response.headers['x-ratelimit-limit']).toBe('5');
      const reset = Number(response.headers['x-ratelimit-reset']);
      expect(reset).toBeGreaterThan(Date.now() / 1000);
      // The window's end rounded up to a whole second.
      expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 3600);
      seen.push(remaining(response));
    }
    expect(seen).toEqual([4, 3, 2, 1, 0]);

    const limited = await api.request({ method: 'GET', url: '/api/auth/me', token: user.token });
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ success: false, error: { code: 'RATE_LIMITED', details: [] } });
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(remaining(limited)).toBe(0);

    // Another user has a budget of their own.
    const other = await api.registerUser();
    expect((await api.request({ method: 'GET', url: '/api/links', token: other.token })).statusCode).toBe(200);
  });

  it('limits unauthenticated callers per address, unknown routes included', async () => {
    const headers = { 'x-forwarded-for': '203.0.113.9' }; // ignored: TRUST_PROXY is off
    const codes: number[] = [];
    for (let i = 0; i < 4; i++) {
      const response = await api.request({ method: 'GET', url: '/api/no-such-route', headers, remoteAddress: '198.51.100.7' });
      expect(response.json().success).toBe(false);
      expect(response.headers['x-ratelimit-limit']).toBe('3');
      codes.push(response.statusCode);
    }
    expect(codes).toEqual([404, 404, 404, 429]);
    const elsewhere = await api.request({ method: 'GET', url: '/api/no-such-route', remoteAddress: '198.51.100.8' });
    expect(elsewhere.statusCode).toBe(404);
  });

  it('holds register and login to a stricter per-address budget', async () => {
    const remoteAddress = '192.0.2.44';
    const codes: number[] = [];
    for (let i = 0; i < 5; i++) {
      const response = await api.request({
        method: 'POST',
        url: '/api/auth/login',
        remoteAddress,
        payload: { email: 'x@example.com', password: 'wrong-password' },
      });
      expect(response.headers['x-ratelimit-limit']).toBe('4');
      codes.push(response.statusCode);
    }
    expect(codes).toEqual([401, 401, 401, 401, 429]);
    const register = await api.request({
      method: 'POST',
      url: '/api/auth/register',
      remoteAddress,
      payload: { name: 'n', email: 'n@example.com', password: 'password123' },
    });
    expect(register.statusCode).toBe(429);
  });

  it('leaves health checks out of the limits', async () => {
    for (let i = 0; i < 5; i++) {
      const response = await api.request({ method: 'GET', url: '/healthz', remoteAddress: '198.51.100.99' });
      expect(response.statusCode).toBe(200);
    }
  });
});

describe('request bodies', () => {
  it('refuses a body over 1 MiB with 413 in the envelope', async () => {
    const payload = JSON.stringify({ title: 'x'.repeat(1024 * 1024), defaultUrl: 'https://example.com' });
    const other = await api.registerUser();
    const response = await api.request({
      method: 'POST',
      url: '/api/links',
      token: other.token,
      headers: { 'content-type': 'application/json' },
      payload,
    });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toMatchObject({ success: false, error: { code: 'INVALID_REQUEST' } });
  });

  it('refuses a body that is not JSON', async () => {
    const other = await api.registerUser();
    const response = await api.request({
      method: 'POST',
      url: '/api/links',
      token: other.token,
      headers: { 'content-type': 'text/plain' },
      payload: 'title=x',
    });
    expect(response.statusCode).toBe(415);
    expect(response.json().error.code).toBe('INVALID_REQUEST');
  });
});

describe('rate limits without Redis', () => {
  it('let requests through, without limit headers, and say so in the log once', async () => {
    // A port nothing listens on: this client never connects.
    const deadRedis = createRedis('redis://127.0.0.1:1', {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    });
    deadRedis.on('error', () => {});
    const lines: string[] = [];
    const app = await buildApi({
      config: api.env.config,
      sql: api.env.sql,
      redis: deadRedis,
      subscriber: deadRedis,
      logger: createLogger('api', 'warn', { write: (line: string) => void lines.push(line) }),
    });
    try {
      for (let i = 0; i < 3; i++) {
        const response = await app.inject({ method: 'GET', url: '/api/no-such-route', remoteAddress: '198.51.100.50' });
        expect(response.statusCode).toBe(404);
        expect(response.headers['x-ratelimit-limit']).toBeUndefined();
      }
      expect(lines.filter((line) => line.includes('rate limiter unavailable; request allowed'))).toHaveLength(1);
    } finally {
      await app.close();
      deadRedis.disconnect();
    }
  });
});
