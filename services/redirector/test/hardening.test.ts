// The redirector against abuse: scans of unknown codes, outsized links, pages that could run code.
import { afterEach, describe, expect, it } from 'vitest';
import { PAGE_CSP } from '@deeplink/core';
import { createLink, metric, newCode, redirectorsWithOwnEnvironment, visit, visitAs } from './support.js';
import { uwsImplementation } from '../src/uws.js';

const redirectors = redirectorsWithOwnEnvironment();
afterEach(() => redirectors.stopAll());
const redirectorWith = redirectors.start;

describe('redirector hardening', () => {
  it('puts a strict Content-Security-Policy on every page it serves', async () => {
    const { redirector } = await redirectorWith({});
    const notFound = await visit(`${redirector.url}/no-such-code`);
    expect(notFound.status).toBe(404);
    expect(notFound.headers.get('content-security-policy')).toBe(PAGE_CSP);
    expect(PAGE_CSP).toMatch(/default-src 'none'.*script-src 'sha256-/);
  });

  it('lets a scan of unknown codes reach the database only at the configured rate per address', async () => {
    const { redirector } = await redirectorWith({ UNKNOWN_CODE_BURST: '5', UNKNOWN_CODE_RATE: '1' });
    const statuses = [];
    for (let i = 0; i < 30; i++) statuses.push((await visit(`${redirector.url}/scan${i}x${newCode()}`)).status);
    expect(new Set(statuses)).toEqual(new Set([404]));
    // Five lookups (the burst) and perhaps one refilled token; the rest answered without one.
    expect(await metric(redirector.metricsUrl, 'redirector_link_cache_misses_total', 'layer="db"')).toBeLessThanOrEqual(6);
    expect(await metric(redirector.metricsUrl, 'redirector_lookups_throttled_total')).toBeGreaterThanOrEqual(24);
  });

  it('counts every address of an IPv6 /64 against one budget, for unknown codes and unknown hosts alike', async () => {
    const { redirector } = await redirectorWith({ TRUST_PROXY: '1', UNKNOWN_CODE_BURST: '5', UNKNOWN_CODE_RATE: '1' });
    const statuses = [];
    for (let i = 0; i < 30; i++) {
      // A new address of the same /64 each time, as a client holding the whole network could send.
      const forwardedFor = `2001:db8:aa:bb:${(i + 1).toString(16)}::${(i * 7 + 3).toString(16)}`;
      const response =
        i % 2 === 0
          ? await visit(`${redirector.url}/scan${i}x${newCode()}`, { 'x-forwarded-for': forwardedFor })
          : await visitAs(`${redirector.url}/${newCode()}`, `h${i}x${newCode()}.example.net`, { 'x-forwarded-for': forwardedFor });
      statuses.push(response.status);
    }
    expect(new Set(statuses)).toEqual(new Set([404]));
    // Five lookups (the burst) and perhaps one refilled token; the rest answered without one.
    expect(await metric(redirector.metricsUrl, 'redirector_lookups_throttled_total')).toBeGreaterThanOrEqual(24);
    // Another /64 has a budget of its own.
    await visit(`${redirector.url}/other${newCode()}`, { 'x-forwarded-for': '2001:db8:aa:bc::1' });
    expect(await metric(redirector.metricsUrl, 'redirector_link_cache_misses_total', 'layer="db"')).toBeLessThanOrEqual(7);
  });

  it('refuses a Host no domain can have with a 400, before any cache, Redis or PostgreSQL lookup', async () => {
    const { env, redirector } = await redirectorWith({ UNKNOWN_CODE_BURST: '100000' });
    const label = 'a'.repeat(63);
    const hosts = [
      `${`${label}.`.repeat(64)}example.com`, // 4 KB of valid labels: longer than DNS allows
      `h.${'x'.repeat(60_000)}.example.com`, // a label far over 63
      'bad_host<script>.example.com',
      'intranet',
    ];
    let refused = 0;
    for (let i = 0; i < 200; i++) {
      const host = `${i}${hosts[i % hosts.length]}`;
      const url = `${redirector.url}/${i % 3 === 0 ? '.well-known/assetlinks.json' : newCode()}`;
      // Node's own http server (under uWebSockets.js's JS fallback) refuses headers over 16 KiB
      // itself, before the redirector sees them: a 431, or the connection reset mid-request.
      if (uwsImplementation() === 'fallback' && host.length > 16_000) {
        const outcome = await visitAs(url, host).then(
          (response) => response.status,
          (error: NodeJS.ErrnoException) => error.code,
        );
        expect([431, 'ECONNRESET', 'EPIPE'], host.slice(0, 80)).toContain(outcome);
        continue;
      }
      const response = await visitAs(url, host);
      expect(response.status, host.slice(0, 80)).toBe(400);
      expect(response.body).toBe('Bad Request: the Host header names no domain\n');
      refused++;
    }
    const domainKeys = async () => {
      const keys: string[] = [];
      let cursor = '0';
      do {
        const [next, batch] = await env.redis.scan(cursor, 'MATCH', `${env.env.REDIS_PREFIX}domain:*`, 'COUNT', 1000);
        keys.push(...batch);
        cursor = next;
      } while (cursor !== '0');
      return keys;
    };
    expect(await domainKeys()).toEqual([]);
    expect(await metric(redirector.metricsUrl, 'redirector_domain_cache_entries')).toBe(0);
    expect(await metric(redirector.metricsUrl, 'redirector_domain_cache_bytes')).toBe(0);
    expect(await metric(redirector.metricsUrl, 'redirector_responses_total', 'status="400"')).toBe(refused);

    // A well-formed hostname no account holds is still looked up once, and is a 404.
    expect((await visitAs(`${redirector.url}/${newCode()}`, 'nobody.example.net')).status).toBe(404);
    // The unknown host is remembered in Redis after the answer, not before it.
    await expect.poll(domainKeys).toEqual([`${env.env.REDIS_PREFIX}domain:nobody.example.net`]);
    expect(await metric(redirector.metricsUrl, 'redirector_domain_cache_entries')).toBe(1);
  });

  it('keeps real links cached while unknown codes pour in (they have a cache of their own)', async () => {
    const { env, redirector, userId } = await redirectorWith({ LINK_CACHE_MAX: '4', NEGATIVE_CACHE_MAX: '1000' });
    const links = [await createLink(env.sql, userId), await createLink(env.sql, userId)];
    for (const link of links) expect((await visit(`${redirector.url}/${link.code}`)).status).toBe(302);
    for (let i = 0; i < 50; i++) await visit(`${redirector.url}/unknown${i}x${newCode()}`);
    const redisHits = await metric(redirector.metricsUrl, 'redirector_link_cache_hits_total', 'layer="redis"');
    for (const link of links) expect((await visit(`${redirector.url}/${link.code}`)).status).toBe(302);
    expect(await metric(redirector.metricsUrl, 'redirector_link_cache_hits_total', 'layer="redis"')).toBe(redisHits); // both still in process
    expect(await metric(redirector.metricsUrl, 'redirector_link_cache_entries')).toBe(2);
  });

  it('bounds the link cache by bytes as well as entries', async () => {
    const { env, redirector, userId } = await redirectorWith({ LINK_CACHE_MAX_BYTES: '20000' });
    // Links near the size limit (stored directly, as an old or imported link could be).
    for (let i = 0; i < 20; i++) {
      const link = await createLink(env.sql, userId, {
        defaultUrl: `https://example.com/${'p'.repeat(1800)}${i}`,
        customParameters: { utm_campaign: 'c'.repeat(200) },
      });
      expect((await visit(`${redirector.url}/${link.code}`)).status).toBe(302);
    }
    expect(await metric(redirector.metricsUrl, 'redirector_link_cache_bytes')).toBeLessThanOrEqual(20_000);
    expect(await metric(redirector.metricsUrl, 'redirector_link_cache_entries')).toBeLessThan(20);
  });
});
