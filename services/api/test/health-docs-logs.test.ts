import { createRedis } from '@deeplink/core/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../src/app.js';
import { createApiHarness, type ApiHarness } from './harness.js';

let api: ApiHarness;
beforeAll(async () => {
  api = await createApiHarness({ captureLogs: true });
});
afterAll(() => api.close());

describe('health', () => {
  it('answers /healthz and /readyz when Redis and PostgreSQL are up', async () => {
    expect((await api.request({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    const ready = await api.request({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    // The public answer says whether, not which dependency: that detail is on the metrics listener.
    expect(ready.json()).toEqual({ status: 'ok' });
  });

  it('answers /readyz with 503 when Redis is unreachable', async () => {
    // A port nothing listens on: this client never connects.
    const deadRedis = createRedis('redis://127.0.0.1:1', {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    });
    deadRedis.on('error', () => {});
    const app = await buildApi({ config: api.env.config, sql: api.env.sql, redis: deadRedis, subscriber: deadRedis });
    try {
      const response = await app.inject({ method: 'GET', url: '/readyz' });
      expect(response.statusCode).toBe(503);
      expect(response.json()).toEqual({ status: 'unavailable' });
    } finally {
      await app.close();
      deadRedis.disconnect();
    }
  });
});

describe('OpenAPI document', () => {
  it('describes every endpoint as JSON and serves a browsable page', async () => {
    const doc = (await api.request({ method: 'GET', url: '/api/docs/json' })).json();
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths).sort()).toEqual(
      expect.arrayContaining([
        '/api/auth/register',
        '/api/auth/login',
        '/api/auth/me',
        '/api/auth/api-keys',
        '/api/auth/api-keys/{id}',
        '/api/links',
        '/api/links/{id}',
      ]),
    );
    expect(Object.keys(doc.paths['/api/links/{id}']).sort()).toEqual(['delete', 'get', 'put']);
    expect(JSON.stringify(doc.paths['/api/links'].post.requestBody)).toContain('defaultUrl');
    const page = await api.request({ method: 'GET', url: '/api/docs' });
    const html = page.statusCode === 302 ? await api.request({ method: 'GET', url: page.headers.location as string }) : page;
    expect(html.headers['content-type']).toContain('text/html');
  });
});

describe('secrets', () => {
  it('never puts passwords, tokens, keys or key hashes in a response or a log line', async () => {
    const password = 'very-secret-password-42';
    const register = await api.request({
      method: 'POST',
      url: '/api/auth/register',
      payload: { name: 'Secretive', email: 'secret@example.com', password },
    });
    const { token } = register.json().data;
    const login = await api.request({ method: 'POST', url: '/api/auth/login', payload: { email: 'secret@example.com', password } });
    const created = await api.request({ method: 'POST', url: '/api/auth/api-keys', token, payload: { name: 'k' } });
    const { key, id } = created.json().data.apiKey;
    await api.request({ method: 'GET', url: '/api/auth/me', token: key });
    await api.request({ method: 'POST', url: '/api/auth/login', payload: { email: 'secret@example.com', password: 'wrong-password-99' } });
    await api.request({ method: 'DELETE', url: `/api/auth/api-keys/${id}`, token });

    const [row] = await api.env.sql<{ password_hash: string }[]>`SELECT password_hash FROM users WHERE email = 'secret@example.com'`;
    const responses = [register.body, login.body, created.body].join('\n');
    expect(responses).not.toContain(password);
    expect(responses).not.toContain(row!.password_hash);

    const logs = api.logs.join('');
    expect(api.logs.length).toBeGreaterThan(5);
    for (const secret of [password, 'wrong-password-99', token, key, row!.password_hash]) expect(logs).not.toContain(secret);
  });
});

describe('request log', () => {
  it('writes one line per request at info, with its status and time and without credentials', async () => {
    const before = api.logs.length;
    const url = '/api/auth/me?key=dlk_never-in-a-log';
    const answer = await api.request({ method: 'GET', url });
    const lines = api.logs
      .slice(before)
      .join('')
      .split('\n')
      .filter((line) => line.includes('/api/auth/me'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'info',
      msg: 'request',
      req: { method: 'GET', url: '/api/auth/me?key=[redacted]' },
      res: { statusCode: answer.statusCode },
      responseTime: expect.any(Number),
    });
    expect(api.logs.slice(before).join('')).not.toContain('dlk_never-in-a-log');
  });
});
