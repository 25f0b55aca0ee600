/// <reference lib="dom" />
// The debug page (`?d=1`) in Debian's Chromium: a link on a custom domain whose Apple association
// file is served wrong (as HTML, and for another app), read as a person reads it, under the page's
// strict Content-Security-Policy. The whole stack runs; the files are fetched from a local server
// standing in for the domain's public site (ASSOCIATION_CHECK_ORIGIN).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type DeeplinkClient } from '../../packages/client/src/index.js';
import { appleAppSiteAssociation } from '@deeplink/core';
import { axeViolations } from '@deeplink/test-kit/axe';
import { launchChromium, openPage } from '@deeplink/test-kit/browser';
import { startDnsServer, type DnsServer } from '@deeplink/test-kit/dns-server';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { startStack, type Stack } from '@deeplink/test-kit/stack';

const HOST = 'go.debug-page.test';
const screenshots = join(import.meta.dirname, '../../.screenshots');

let files: Server;
let dns: DnsServer;
let env: TestEnvironment;
let stack: Stack;
let client: DeeplinkClient;
let browser: Awaited<ReturnType<typeof launchChromium>>;

beforeAll(async () => {
  // The domain's public site: an Apple file for another team's app, as text/html; no Android file.
  files = createServer((req, res) => {
    if (req.url === '/.well-known/apple-app-site-association') {
      const apps = [{ platform: 'ios' as const, teamId: 'ZZZZZ99999', bundleId: 'com.example.shop' }];
      return res.writeHead(200, { 'content-type': 'text/html' }).end(appleAppSiteAssociation(apps));
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  dns = await startDnsServer();
  env = await createTestEnvironment({
    DNS_SERVERS: dns.address,
    ASSOCIATION_CHECK_ORIGIN: `http://127.0.0.1:${(files.address() as AddressInfo).port}`,
    RATE_LIMIT_AUTH_MAX: '1000',
  });
  stack = await startStack(env.env);
  client = createClient({ baseUrl: `${stack.apiUrl}/api` });
  await client.auth.register({ name: 'Debug', email: `debug-${process.pid}@example.com`, password: 'a long enough password' });
  browser = await launchChromium({ hosts: { [HOST]: '127.0.0.1' } });
  mkdirSync(screenshots, { recursive: true });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await env?.close();
  await dns?.close();
  await new Promise<void>((resolve) => (files ? files.close(() => resolve()) : resolve()));
});

describe('the debug page in Chromium', () => {
  it("shows where each visitor goes and what is wrong with the custom domain's association files", async () => {
    await client.apps.create({ platform: 'ios', name: 'Acme Shop', teamId: 'ABCDE12345', bundleId: 'com.example.shop' });
    const domain = await client.domains.create({ hostname: HOST });
    dns.records.set(domain.verification.name, [domain.verification.value]);
    expect((await client.domains.verify(domain.id)).status).toBe('active');
    const link = await client.links.create({
      title: 'Spring',
      domain: HOST,
      defaultUrl: 'https://example.com/spring',
      iosLink: { url: 'shop://spring', bundleId: 'com.example.shop' },
    });
    const { port } = new URL(stack.shortUrlBase);
    const code = new URL(link.url).pathname.slice(1);

    const { page, problems } = await openPage(browser.context, 1280);
    const response = await page.goto(`http://${HOST}:${port}/${code}?d=1`);
    expect(response?.status()).toBe(200);
    expect(await axeViolations(page)).toEqual([]);
    await page.screenshot({ path: join(screenshots, 'debug-page-1280.png'), fullPage: true });

    const read = await page.evaluate(() => ({
      cases: Array.from(document.querySelectorAll('#cases tbody tr')).map((row) => [
        row.querySelector('th')!.textContent,
        row.querySelectorAll('td')[0]!.textContent,
      ]),
      apple: Array.from(document.querySelectorAll('ul[data-file="apple"] li.problem')).map((item) => item.textContent),
      android: Array.from(document.querySelectorAll('ul[data-file="android"] li.problem')).map((item) => item.textContent),
      problemColour: getComputedStyle(document.querySelector('li.problem')!).color,
      scripts: document.scripts.length,
    }));
    expect(Object.fromEntries(read.cases)).toMatchObject({
      iPhone:
        '200, the "Open in the app" page: it opens shop://spring; without the app, it goes on to https://example.com/spring after 1.5 s',
      Desktop: '302 to https://example.com/spring',
    });
    expect(read.apple).toEqual([
      'Problem: Content-Type is "text/html", not application/json.',
      'Problem: Does not list the app id ABCDE12345.com.example.shop (registered for this domain).',
    ]);
    expect(read.android).toEqual([
      'Problem: Answers 404 instead of 200: no app of this platform is registered for the domain, or the file is not served.',
    ]);
    // The page's own style applied (the policy allows it by hash), and nothing else ran or was refused.
    expect(read.problemColour).not.toBe('rgb(0, 0, 0)');
    expect(read.scripts).toBe(0);
    expect(problems).toEqual([]);
    await page.close();
  });
});
