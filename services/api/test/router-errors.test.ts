// Answers that come from Fastify's router and Node's HTTP parser rather than a route: the
// envelope, and the rate limit, like every other API answer. Also the docs page's headers.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiHarness, type ApiHarness } from './harness.js';

let dist: string;
let api: ApiHarness;
beforeAll(async () => {
  // With a dashboard build: its catch-all route must not swallow unknown API paths.
  dist = mkdtempSync(join(tmpdir(), 'dashboard-dist-'));
  writeFileSync(join(dist, 'index.html'), '<!doctype html><title>Dashboard</title>');
  api = await createApiHarness({ dashboardDir: dist, env: { RATE_LIMIT_ANONYMOUS_MAX: '2' } });
});
afterAll(async () => {
  await api.close();
  rmSync(dist, { recursive: true, force: true });
});

let address = 0;
/** A client address of its own per test, so each starts with a fresh anonymous budget of 2. */
const newClient = () => `10.9.0.${++address}`;

const expectEnvelope = (response: { statusCode: number; headers: Record<string, unknown>; json(): any }, status: number, code: string) => {
  expect(response.statusCode).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  const body = response.json();
  expect(body).toMatchObject({ success: false, error: { code } });
  expect(Array.isArray(body.error.details)).toBe(true);
  return body;
};

describe('router errors', () => {
  it('answers a path that is not valid percent-encoding with the 400 envelope, counted against the rate limit', async () => {
    const remoteAddress = newClient();
    const bad = () => api.request({ method: 'GET', url: '/api/links/%E0%A4%A', remoteAddress });
    const body = expectEnvelope(await bad(), 400, 'INVALID_REQUEST');
    expect(body.error.message).toBe('The path is not valid percent-encoding');
    await bad();
    expectEnvelope(await bad(), 429, 'RATE_LIMITED');
  });

  it('answers a path parameter over 100 characters (no such id) with the 404 envelope, counted against the rate limit', async () => {
    const remoteAddress = newClient();
    const long = () => api.request({ method: 'GET', url: `/api/links/${'a'.repeat(300)}`, remoteAddress });
    expectEnvelope(await long(), 404, 'NOT_FOUND');
    await long();
    expectEnvelope(await long(), 429, 'RATE_LIMITED');
  });

  it('counts unknown API paths against the rate limit, even beside the dashboard', async () => {
    const remoteAddress = newClient();
    for (const url of ['/api/no-such-route', '/api/links/x/y/z'])
      expectEnvelope(await api.request({ method: 'GET', url, remoteAddress }), 404, 'NOT_FOUND');
    expectEnvelope(await api.request({ method: 'DELETE', url: '/api/no-such-route', remoteAddress }), 429, 'RATE_LIMITED');
    // The dashboard's pages stay outside the API's limits.
    expect((await api.request({ method: 'GET', url: '/links/abc', remoteAddress })).statusCode).toBe(200);
  });

  it('answers headers over 16 KiB with the 431 envelope and closes the connection', async () => {
    const url = await api.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = new URL(url);
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1');
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk));
      socket.on('close', () => resolve(answer));
      socket.on('error', reject);
      socket.write(`GET /api/auth/me HTTP/1.1\r\nHost: localhost\r\nX-Filler: ${'x'.repeat(20_000)}\r\n\r\n`);
    });
    const [head, body] = raw.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 431 /);
    expect(head).toMatch(/content-type: application\/json/i);
    expect(JSON.parse(body!)).toEqual({
      success: false,
      error: { code: 'INVALID_REQUEST', message: 'The request headers are larger than the server accepts (16 KiB)', details: [] },
    });
  });
});

describe('the API docs page', () => {
  it("has the dashboard's strict headers: a CSP that forbids framing, nosniff, no Referer", async () => {
    for (const url of ['/api/docs', '/api/docs/reference.css', '/api/docs/json']) {
      const response = await api.request({ method: 'GET', url, remoteAddress: newClient() });
      expect(response.statusCode, url).toBeLessThan(400);
      const csp = String(response.headers['content-security-policy']);
      expect(csp, url).toContain("frame-ancestors 'none'");
      expect(csp, url).toContain("script-src 'self'");
      expect(csp, url).not.toContain('unsafe-inline');
      expect(response.headers['x-content-type-options'], url).toBe('nosniff');
      expect(response.headers['referrer-policy'], url).toBe('no-referrer');
    }
    // The page loads its scripts from files, which the policy allows.
    const page = await api.request({ method: 'GET', url: '/api/docs/static/index.html', remoteAddress: newClient() });
    expect(page.body).not.toMatch(/<script>(?!\s*<\/script>)/);
  });
});
