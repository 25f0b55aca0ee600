// `?d=1` through the redirector process: the debug page instead of the redirect, never a click,
// a few per client address, on the default domain and on custom ones.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { appleAppSiteAssociation, assetLinks } from '@deeplink/core';
import { linksRepository } from '@deeplink/core/db';
import { DEBUG_PAGE_CSP } from '../src/debug-page.js';
import { clickQueue, createLink, metric, newCode, queuedClicks, redirectorsWithOwnEnvironment, UA, visit, visitAs } from './support.js';

const PRINT = Array(32).fill('AB').join(':');
const IOS_APP = 'ios:ABCDE12345.com.example.shop';

/** Serves the default domain's files as they should be, and the custom domain's Apple file as HTML. */
let files: Server;
let origin: string;

beforeAll(async () => {
  files = createServer((req, res) => {
    const apps = [{ platform: 'ios' as const, teamId: 'ABCDE12345', bundleId: 'com.example.shop' }];
    if (req.url === '/.well-known/apple-app-site-association') {
      const type = req.headers.host === 'go.debug.test' ? 'text/html' : 'application/json';
      return res.writeHead(200, { 'content-type': type }).end(appleAppSiteAssociation(apps));
    }
    if (req.url === '/.well-known/assetlinks.json') {
      const android = [{ platform: 'android' as const, packageName: 'com.example.shop', sha256CertFingerprints: [PRINT] }];
      return res.writeHead(200, { 'content-type': 'application/json' }).end(assetLinks(android));
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => files.close(() => resolve())));

const redirectors = redirectorsWithOwnEnvironment();
afterEach(() => redirectors.stopAll());

const APP_LINK = {
  androidLink: { url: 'shop://item/7', appPackageName: 'com.example.shop' },
  iosLink: { url: 'shop://item/7', bundleId: 'com.example.shop' },
};

describe('GET /{code}?d=1', () => {
  it('answers the debug page, under a policy that runs no script, and records no click', async () => {
    const { env, redirector, userId } = await redirectors.start({
      ASSOCIATION_CHECK_ORIGIN: origin,
      DEFAULT_DOMAIN_APPS: `${IOS_APP},android:com.example.shop@${PRINT}`,
      CLICK_FLUSH_MS: '10',
    });
    const link = await createLink(env.sql, userId, APP_LINK);

    const response = await visit(`${redirector.url}/${link.code}?d=1`, { 'user-agent': UA.androidChrome });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toBe(DEBUG_PAGE_CSP);
    expect(DEBUG_PAGE_CSP).not.toContain('script-src');
    expect(response.headers.get('cache-control')).toBe('private, no-store');
    const html = await response.text();
    expect(html).toContain('302 to Chrome&#39;s intent: the app com.example.shop opens shop://item/7');
    expect(html).toContain(`Hands /${link.code} to ABCDE12345.com.example.shop.`);
    expect(html).not.toContain('<li class="problem">');
    // The files' origin is the operator's: never on the page.
    expect(html).not.toContain(origin.slice('http://'.length));

    // Other queries are the redirect's, as before; only the redirect is a click.
    for (const query of ['', '?d=0', '?x=1', '?d=1x']) {
      expect((await visit(`${redirector.url}/${link.code}${query}`, { 'user-agent': UA.windowsChrome })).status, query).toBe(302);
    }
    const queue = clickQueue(env.env.REDIS_URL!, env.env.QUEUE_PREFIX!);
    try {
      await expect.poll(async () => (await queuedClicks(queue)).length, { timeout: 5_000 }).toBe(4);
    } finally {
      await queue.close();
    }
  });

  it('answers a page of its own for an unknown code, and for an expired link', async () => {
    const { env, redirector, userId } = await redirectors.start({ ASSOCIATION_CHECK_ORIGIN: origin });
    const unknown = await visit(`${redirector.url}/${newCode()}?d=1`);
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('No link has this code on this domain');

    const expired = await createLink(env.sql, userId, { expirationDate: new Date('2020-01-01T00:00:00.000Z') });
    const page = await visit(`${redirector.url}/${expired.code}?d=1`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('410, the &quot;Link expired&quot; page');
  });

  it('limits pages per client address, and leaves redirects alone meanwhile', async () => {
    const { env, redirector, userId } = await redirectors.start({ ASSOCIATION_CHECK_ORIGIN: origin });
    const link = await createLink(env.sql, userId);
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await visit(`${redirector.url}/${link.code}?d=1`)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    const refused = await visit(`${redirector.url}/${link.code}?d=1`);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect((await visit(`${redirector.url}/${link.code}`)).status).toBe(302);
    expect(await metric(redirector.metricsUrl, 'redirector_responses_total', 'status="429"')).toBe(3);
  });

  it('builds at most eight pages at once, whoever asks', async () => {
    // The domain's site never answers: each page waits for the check's timeout.
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { env, redirector, userId } = await redirectors.start({
        ASSOCIATION_CHECK_ORIGIN: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
        TRUST_PROXY: '1',
      });
      const link = await createLink(env.sql, userId);
      const responses = await Promise.all(
        Array.from({ length: 9 }, (_, i) => visit(`${redirector.url}/${link.code}?d=1`, { 'x-forwarded-for': `203.0.113.${i + 1}` })),
      );
      expect(responses.map((response) => response.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 429]);
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it("checks a custom domain's own files and apps, and shows the app's last SDK call", async () => {
    const { env, redirector, userId } = await redirectors.start({ ASSOCIATION_CHECK_ORIGIN: origin });
    const [domain] = await env.sql<{ id: string }[]>`
      INSERT INTO domains (user_id, hostname, verification_token, verified_at) VALUES (${userId}, 'go.debug.test', 'proof', now()) RETURNING id`;
    await env.sql`
      INSERT INTO apps (user_id, platform, team_id, bundle_id, key_last_used_at, key_last_call)
      VALUES (${userId}, 'ios', 'ABCDE12345', 'com.example.shop', '2026-11-25T09:30:00Z', 'install')`;
    const code = newCode();
    await linksRepository(env.sql).create(userId, code, { title: 'T', defaultUrl: 'https://example.com/d', ...APP_LINK }, domain!.id);

    const page = await visitAs(`${redirector.url}/${code}?d=1`, 'go.debug.test');
    expect(page.status).toBe(200);
    expect(page.body).toContain(`<h1>http://go.debug.test/${code}</h1>`);
    expect(page.body).toContain('https://go.debug.test/.well-known/apple-app-site-association');
    expect(page.body).toContain('<li class="problem">Problem: Content-Type is &quot;text/html&quot;, not application/json.</li>');
    expect(page.body).toContain('com.example.shop (iOS): last call POST /api/app/install at 2026-11-25 09:30 UTC');
    // The Android app of the link is not registered by its owner: named, without a call.
    expect(page.body).toContain("com.example.shop (Android): not registered by the link's owner");
  });
});
