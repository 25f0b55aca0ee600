import { sampleValue } from '@deeplink/test-kit/metrics';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_CSP, redisKeys } from '@deeplink/core';
import type { LinkRecord } from '@deeplink/core/db';
import { cacheLink } from '@deeplink/core/redis';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { UA, createLink, createUser, metric, startRedirector, visit, type RedirectorProcess } from './support.js';
import { uwsImplementation } from '../src/uws.js';

/** Where the app page's button with this id (`app`, `fallback`) leads: what its script navigates to. */
function scriptString(html: string, id: string): string {
  const match = new RegExp(`id="${id}" href="([^"]*)"`).exec(html);
  if (!match) throw new Error(`no ${id} button in the page`);
  return match[1]!.replace(/&amp;/g, '&');
}

// customParameters come back from jsonb with their keys sorted, hence utm_medium before utm_source.
describe('redirector over HTTP', () => {
  let env: TestEnvironment;
  let redirector: RedirectorProcess;
  let full: LinkRecord;
  let bare: LinkRecord;
  let expired: LinkRecord;

  beforeAll(async () => {
    env = await createTestEnvironment();
    const userId = await createUser(env.sql);
    full = await createLink(env.sql, userId, {
      defaultUrl: 'https://example.com/default?utm_source=site',
      androidLink: {
        url: 'shop://product/42',
        appPackageName: 'com.example.shop',
        minimumVersion: '2.1.0',
        fallbackUrl: 'https://example.com/android',
      },
      iosLink: { url: 'shop://product/42', bundleId: 'com.example.shop', minimumVersion: '3.0' },
      desktopUrl: 'https://example.com/desktop?ref=dl',
      customParameters: { utm_source: 'newsletter', utm_medium: 'email' },
    });
    bare = await createLink(env.sql, userId, { defaultUrl: 'https://example.com/bare' });
    expired = await createLink(env.sql, userId, {
      defaultUrl: 'https://example.com/old',
      expirationDate: new Date(Date.now() - 60_000),
    });
    // One link through the API's write-through path, the others only in PostgreSQL.
    await cacheLink(env.redis, redisKeys(env.config.REDIS_PREFIX), full);
    redirector = await startRedirector(env.env);
  });

  afterAll(async () => {
    expect(await redirector?.stop()).toBe(0);
    await env?.close();
  });

  const get = (code: string, userAgent: string, method = 'GET') => visit(`${redirector.url}/${code}`, { 'user-agent': userAgent }, method);

  it('sends Android Chrome to an intent URL with package, fallback and minimum version', async () => {
    const res = await get(full.code, UA.androidChrome);
    expect(res.status).toBe(302);
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    expect(res.headers.get('location')).toBe(
      'intent://product/42#Intent;scheme=shop;package=com.example.shop;' +
        `S.browser_fallback_url=${encodeURIComponent('https://example.com/android?utm_medium=email&utm_source=newsletter')};` +
        'S.min_version=2.1.0;end',
    );
  });

  it.each([['iphoneSafari'], ['ipadSafari']] as const)('serves %s the app page with the app URL and the fallback', async (agent) => {
    const res = await get(full.code, UA[agent]);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    expect(res.headers.get('content-security-policy')).toBe(PAGE_CSP);
    const html = await res.text();
    expect(scriptString(html, 'app')).toBe('shop://product/42?min_version=3.0');
    // No iOS fallback: defaultUrl, whose own utm_source wins over the custom one.
    expect(scriptString(html, 'fallback')).toBe('https://example.com/default?utm_source=site&utm_medium=email');
    expect(html).toContain('href="shop://product/42?min_version=3.0"');
    expect(html).toContain('href="https://example.com/default?utm_source=site&amp;utm_medium=email"');
  });

  it.each([['windowsChrome'], ['linuxFirefox'], ['macSafari'], ['googlebot']] as const)(
    'sends %s to the desktop URL with the custom parameters',
    async (agent) => {
      const res = await get(full.code, UA[agent]);
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe('https://example.com/desktop?ref=dl&utm_medium=email&utm_source=newsletter');
    },
  );

  it('sends every platform of a link without platform destinations to defaultUrl (from PostgreSQL)', async () => {
    for (const agent of [UA.androidChrome, UA.iphoneSafari, UA.windowsChrome, '']) {
      const res = await get(bare.code, agent);
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe('https://example.com/bare');
    }
  });

  it('ignores the query string of the short URL', async () => {
    const res = await visit(`${redirector.url}/${bare.code}?utm_source=x`);
    expect(res.headers.get('location')).toBe('https://example.com/bare');
  });

  it('answers 410 with an HTML page for an expired link', async () => {
    const res = await get(expired.code, UA.windowsChrome);
    expect(res.status).toBe(410);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toMatch(/expired/i);
  });

  it('answers 404 with an HTML page for unknown codes, malformed paths and /', async () => {
    for (const path of ['/nope404', '/', '/a/b', '/%3Cscript%3E', `/${'x'.repeat(65)}`]) {
      const res = await visit(`${redirector.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(await res.text()).toMatch(/not found/i);
    }
  });

  it('answers HEAD like GET, without a body', async () => {
    for (const [code, agent] of [
      [full.code, UA.androidChrome],
      [full.code, UA.iphoneSafari],
      [expired.code, UA.windowsChrome],
      ['nope404', UA.windowsChrome],
    ] as const) {
      const viaGet = await get(code, agent);
      const getBody = await viaGet.text();
      const viaHead = await get(code, agent, 'HEAD');
      expect(viaHead.status).toBe(viaGet.status);
      expect(viaHead.headers.get('location')).toBe(viaGet.headers.get('location'));
      expect(viaHead.headers.get('content-type')).toBe(viaGet.headers.get('content-type'));
      // Node's http server, under the JS fallback, leaves Content-Length out of a bodiless HEAD answer.
      if (uwsImplementation() === 'native' || getBody !== '')
        expect(viaHead.headers.get('content-length')).toBe(String(Buffer.byteLength(getBody)));
      expect(await viaHead.text()).toBe('');
    }
  });

  it('records a click for GET but not for HEAD', async () => {
    const before = await metric(redirector.metricsUrl, 'redirector_clicks_buffered_total');
    await get(full.code, UA.windowsChrome, 'HEAD');
    await get(full.code, UA.iphoneSafari, 'HEAD');
    expect(await metric(redirector.metricsUrl, 'redirector_clicks_buffered_total')).toBe(before);
    await get(full.code, UA.windowsChrome);
    await get(full.code, UA.iphoneSafari);
    expect(await metric(redirector.metricsUrl, 'redirector_clicks_buffered_total')).toBe(before + 2);
  });

  it('accepts only GET and HEAD', async () => {
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const res = await get(full.code, UA.windowsChrome, method);
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, HEAD');
    }
  });

  it('answers /healthz and /readyz publicly without detail, and with it on the metrics listener', async () => {
    for (const base of [redirector.url, redirector.metricsUrl]) {
      const health = await visit(`${base}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok' });
    }
    const ready = await visit(`${redirector.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ok' });
    const detail = await visit(`${redirector.metricsUrl}/readyz`);
    expect(await detail.json()).toEqual({
      status: 'ok',
      checks: { redis: 'ok', postgres: 'ok', accepting: 'ok', spool: 'ok' },
      detail: { spooling: false, spoolBytes: 0, cachedLinks: expect.any(Number) },
    });
  });

  it('counts answers by status', async () => {
    const count = (status: number) => metric(redirector.metricsUrl, 'redirector_responses_total', `status="${status}"`).catch(() => 0);
    const [found, notFound] = await Promise.all([count(302), count(404)]);
    await get(full.code, UA.windowsChrome);
    await get(full.code, UA.windowsChrome);
    await get('no-such-code', UA.windowsChrome);
    await get(full.code, UA.windowsChrome, 'POST'); // 405: not a short-link answer
    expect(await Promise.all([count(302), count(404)])).toEqual([found + 2, notFound + 1]);
  });

  it('exposes Prometheus metrics on the metrics listener only', async () => {
    const res = await visit(`${redirector.metricsUrl}/metrics`);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(sampleValue(text, 'redirector_responses_total', 'status="302"')).toBeGreaterThan(0);
    expect(sampleValue(text, 'redirector_responses_total', 'status="410"')).toBeGreaterThan(0);
    expect(sampleValue(text, 'redirector_link_cache_hits_total', 'layer="lru"')).toBeGreaterThan(0);
    expect(sampleValue(text, 'redirector_link_cache_hits_total', 'layer="redis"')).toBe(1);
    expect(sampleValue(text, 'redirector_link_cache_hits_total', 'layer="db"')).toBe(2);
    expect(sampleValue(text, 'redirector_uws_native', 'service="redirector"')).toBe(uwsImplementation() === 'native' ? 1 : 0);
    for (const name of ['clicks_flushed_total', 'clicks_dropped_total', 'queue_flush_errors_total']) {
      expect(text).toMatch(new RegExp(`^# TYPE redirector_${name} counter$`, 'm'));
      expect(sampleValue(text, `redirector_${name}`)).toBeGreaterThanOrEqual(0);
    }
    expect(text).toMatch(/^# TYPE redirector_click_buffer_size gauge$/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds\{service="redirector"\} /m);
    // The public short-link port serves none of it: /metrics is a short code there like any other.
    expect((await visit(`${redirector.url}/metrics`)).status).toBe(404);
  });
});
