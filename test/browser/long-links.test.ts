/// <reference lib="dom" />
// Long dynamic links in Debian's Chromium, as Firebase routed them: Android, iPhone, iPad, desktop
// and a link-preview crawler, each with forced redirects (efr=1) off and on, on a custom domain
// whose allowed URL patterns hold the destinations. Destinations are answered by the test (no
// network); the first answer of the long link itself is recorded to tell a page from a redirect.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type DeeplinkClient } from '../../packages/client/src/index.js';
import { PREVIEW_CRAWLERS } from '@deeplink/core';
import { launchChromium, openPage } from '@deeplink/test-kit/browser';
import { startDnsServer, type DnsServer } from '@deeplink/test-kit/dns-server';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { startStack, type Stack } from '@deeplink/test-kit/stack';
import { UA } from '@deeplink/test-kit/user-agents';

const HOSTNAME = 'go.long-browser.test';
const SITE = 'https://shop.example.test';

let env: TestEnvironment;
let dns: DnsServer;
let stack: Stack;
let client: DeeplinkClient;
let browser: Awaited<ReturnType<typeof launchChromium>>;

beforeAll(async () => {
  dns = await startDnsServer();
  env = await createTestEnvironment({ DNS_SERVERS: dns.address, RATE_LIMIT_AUTH_MAX: '1000', UNKNOWN_CODE_BURST: '1000' });
  stack = await startStack(env.env);
  client = createClient({ baseUrl: `${stack.apiUrl}/api` });
  await client.auth.register({ name: 'Long', email: `long-browser-${process.pid}@example.com`, password: 'a long enough password' });
  const domain = await client.domains.create({ hostname: HOSTNAME, allowedUrlPatterns: [`${SITE}/*`] });
  dns.records.set(domain.verification.name, [domain.verification.value]);
  expect((await client.domains.verify(domain.id)).status).toBe('active');
  browser = await launchChromium({ hosts: { [HOSTNAME]: '127.0.0.1' } });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await env?.close();
  await dns?.close();
});

const PARAMS = {
  link: `${SITE}/item`,
  apn: 'com.example.shop',
  afl: `${SITE}/android`,
  amv: '42',
  ibi: 'com.example.ios',
  ifl: `${SITE}/ios`,
  ipfl: `${SITE}/ipad`,
  imv: '3.1',
  ofl: `${SITE}/desktop`,
  st: 'The spring item',
  sd: 'Everything about it',
};

const longLinkUrl = (efr: boolean) => {
  const { port } = new URL(stack.shortUrlBase);
  return `http://${HOSTNAME}:${port}/?${new URLSearchParams({ ...PARAMS, ...(efr && { efr: '1' }) })}`;
};

/** A page as `userAgent`, the shop's pages answered here, and the long link's own first answer kept. */
async function visit(userAgent: string, efr: boolean) {
  const { page, problems } = await openPage(browser.context, 390, { userAgent });
  await page.route(`${SITE}/**`, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<title>Shop</title>' }));
  // Chromium's own record of the answer: a redirect to intent:// is never followed, so Playwright
  // reports no response for it, but the network domain still sees its status and headers.
  let first: { status: number; location: string | undefined } | undefined;
  const ours = new Set<string>();
  const cdp = await browser.context.newCDPSession(page);
  cdp.on('Network.requestWillBeSent', (event) => {
    if (event.request.url.startsWith(`http://${HOSTNAME}`)) ours.add(event.requestId);
  });
  cdp.on('Network.responseReceivedExtraInfo', (event) => {
    if (first === undefined && ours.has(event.requestId)) {
      first = { status: event.statusCode, location: event.headers.location ?? event.headers.Location };
    }
  });
  await cdp.send('Network.enable');
  await page.goto(longLinkUrl(efr), { waitUntil: 'commit' }).catch(() => {
    // An intent:// redirect is not a page desktop Chromium can open: the answer is read below.
  });
  await expect.poll(() => first).toBeDefined();
  return { page, problems, first: first! };
}

const finish = async (page: Page, problems: string[]) => {
  expect(problems).toEqual([]);
  await page.close();
};

describe.each([false, true])('a long link, efr=1 %s', (efr) => {
  it('sends Android to the app by an intent, with its fallback and minimum version', async () => {
    const { page, problems, first } = await visit(UA.androidChrome, efr);
    expect(first.status).toBe(302);
    expect(first.location).toMatch(/^intent:\/\/shop\.example\.test\/item#Intent;scheme=https;package=com\.example\.shop;/);
    expect(first.location).toContain(`S.browser_fallback_url=${encodeURIComponent(`${SITE}/android`)}`);
    expect(first.location).toContain('S.min_version=42');
    await finish(page, problems);
  });

  it(efr ? 'sends an iPhone straight to the iOS fallback' : 'shows an iPhone the app page, then the iOS fallback', async () => {
    const { page, problems, first } = await visit(UA.iphoneSafari, efr);
    if (efr) {
      expect(first).toEqual({ status: 302, location: `${SITE}/ios` });
    } else {
      expect(first.status).toBe(200);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('The spring item');
      const open = await page.getByRole('link', { name: /Open in/ }).getAttribute('href');
      expect(open).toBe(`com.example.ios://google/link/?deep_link_id=${encodeURIComponent(PARAMS.link)}&min_version=3.1`);
    }
    await expect.poll(() => page.url(), { timeout: 10_000 }).toBe(`${SITE}/ios`);
    await finish(page, problems);
  });

  it(efr ? 'sends an iPad straight to the iPad fallback' : 'shows an iPad the app page, then the iPad fallback', async () => {
    const { page, problems, first } = await visit(UA.ipadSafari, efr);
    expect(first.status).toBe(efr ? 302 : 200);
    await expect.poll(() => page.url(), { timeout: 10_000 }).toBe(`${SITE}/ipad`);
    await finish(page, problems);
  });

  it('sends desktop to ofl', async () => {
    const { page, problems, first } = await visit(UA.windowsChrome, efr);
    expect(first).toEqual({ status: 302, location: `${SITE}/desktop` });
    await expect.poll(() => page.url(), { timeout: 10_000 }).toBe(`${SITE}/desktop`);
    await finish(page, problems);
  });

  it('shows a link-preview crawler the social card of st and sd', async () => {
    const { page, problems, first } = await visit(PREVIEW_CRAWLERS[0].example, efr);
    expect(first.status).toBe(200);
    expect(await page.locator('meta[property="og:title"]').getAttribute('content')).toBe('The spring item');
    expect(await page.locator('meta[property="og:description"]').getAttribute('content')).toBe('Everything about it');
    await finish(page, problems);
  });
});

describe('the allow-list', () => {
  it('answers a long link with a destination outside it with the 404 page, in the browser too', async () => {
    const { port } = new URL(stack.shortUrlBase);
    const { page, problems } = await openPage(browser.context, 390, { userAgent: UA.windowsChrome });
    const response = await page.goto(
      `http://${HOSTNAME}:${port}/?${new URLSearchParams({ link: `${SITE}/ok`, ofl: 'https://evil.test/' })}`,
    );
    expect(response!.status()).toBe(404);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Link not found');
    await finish(page, problems);
  });
});
