import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiHarness, type ApiHarness } from './harness.js';

const INDEX = '<!doctype html><title>Dashboard</title><script type="module" src="/assets/index-AbC123.js"></script>';
let dist: string;
let api: ApiHarness;
beforeAll(async () => {
  dist = mkdtempSync(join(tmpdir(), 'dashboard-dist-'));
  mkdirSync(join(dist, 'assets'));
  writeFileSync(join(dist, 'index.html'), INDEX);
  writeFileSync(join(dist, 'assets/index-AbC123.js'), 'console.log("dashboard")');
  writeFileSync(join(dist, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  // Three anonymous requests a window: the pages and assets must not count against it.
  api = await createApiHarness({ dashboardDir: dist, env: { RATE_LIMIT_ANONYMOUS_MAX: '3' } });
});
afterAll(async () => {
  await api.close();
  rmSync(dist, { recursive: true, force: true });
});

describe('the dashboard at the origin root', () => {
  it('serves index.html with no-cache and a strict Content-Security-Policy', async () => {
    const response = await api.request({ method: 'GET', url: '/' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.body).toBe(INDEX);
    expect(response.headers['cache-control']).toBe('no-cache');
    const csp = String(response.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("default-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(response.headers['x-content-type-options']).toBe('nosniff');
  });

  it('caches hashed assets for a year and other files for revalidation', async () => {
    const asset = await api.request({ method: 'GET', url: '/assets/index-AbC123.js' });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['content-type']).toMatch(/javascript/);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(asset.headers['content-security-policy']).toBeDefined();
    const icon = await api.request({ method: 'GET', url: '/favicon.svg' });
    expect(icon.headers['cache-control']).toBe('no-cache');
  });

  it("answers the dashboard's own paths with index.html, and files, /api and /v1 paths that do not exist with the 404 envelope", async () => {
    for (const path of ['/links', '/links/0b7d2c9e/edit', '/keys?x=1']) {
      const page = await api.request({ method: 'GET', url: path });
      expect(page.statusCode, path).toBe(200);
      expect(page.body, path).toBe(INDEX);
      expect(page.headers['cache-control'], path).toBe('no-cache');
    }
    for (const path of ['/api', '/api/nowhere', '/assets/missing-123.js', '/robots.txt']) {
      const missing = await api.request({ method: 'GET', url: path });
      expect(missing.statusCode, path).toBe(404);
      expect(missing.json().error.code, path).toBe('NOT_FOUND');
    }
    // Firebase's REST paths are the API's too: their 404 in Google's shape, never a page (from
    // another address: this one's budget of three is for the requests around it).
    const missing = await api.request({ method: 'GET', url: '/v1/shortLinks', remoteAddress: '203.0.113.9' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.status).toBe('NOT_FOUND');
    expect((await api.request({ method: 'POST', url: '/links' })).statusCode).toBe(404);
    expect((await api.request({ method: 'GET', url: '/%E0%A4%A' })).statusCode).toBe(400);
    for (const path of ['/../package.json', '/assets/..%2f..%2fpackage.json', '/%2e%2e/%2e%2e/package.json']) {
      const outside = await api.request({ method: 'GET', url: path });
      expect(outside.body, path).not.toContain('"name"');
      expect([200, 403, 404], path).toContain(outside.statusCode);
    }
  });

  it("gives the API docs the same policy but not the API's JSON answers, and keeps pages outside the rate limit", async () => {
    // An address of its own: the unknown /api paths above counted against 127.0.0.1's budget of three.
    const docs = await api.request({ method: 'GET', url: '/api/docs/json', remoteAddress: '10.8.0.1' });
    expect(docs.statusCode).toBe(200);
    expect(docs.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(
      (await api.request({ method: 'GET', url: '/api/auth/me', remoteAddress: '10.8.0.1' })).headers['content-security-policy'],
    ).toBeUndefined();
    for (let i = 0; i < 6; i++) expect((await api.request({ method: 'GET', url: '/' })).statusCode).toBe(200);
    expect(docs.headers['x-ratelimit-limit']).toBe('3');
  });
});

describe('without a dashboard build', () => {
  it('answers / with how to build it, and the API as usual', async () => {
    const bare = await createApiHarness({ dashboardDir: join(tmpdir(), 'no-such-dashboard-build') });
    try {
      const root = await bare.request({ method: 'GET', url: '/' });
      expect(root.statusCode).toBe(503);
      expect(root.body).toContain('npm run build');
      expect((await bare.request({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
      expect((await bare.request({ method: 'GET', url: '/api/auth/me' })).statusCode).toBe(401);
    } finally {
      await bare.close();
    }
  });
});
