/// <reference lib="dom" />
// The redirector's own pages in Debian's Chromium: the 404 and 410 pages and the iOS "open the
// app" page, at phone width (360 px) and desktop width (1280 px), under their strict
// Content-Security-Policy. Screenshots go to .screenshots/ (git-ignored).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type DeeplinkClient } from '../../packages/client/src/index.js';
import { axeViolations } from '@deeplink/test-kit/axe';
import { launchChromium, openPage as openPageIn } from '@deeplink/test-kit/browser';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { startStack, type Stack } from '@deeplink/test-kit/stack';
import { UA } from '@deeplink/test-kit/user-agents';

const screenshots = join(import.meta.dirname, '../../.screenshots');
const WIDTHS = [360, 1280] as const;

let env: TestEnvironment;
let stack: Stack;
let client: DeeplinkClient;
let browser: Awaited<ReturnType<typeof launchChromium>>;

beforeAll(async () => {
  env = await createTestEnvironment({ BRAND_NAME: 'Acme Links', RATE_LIMIT_AUTH_MAX: '1000' });
  stack = await startStack(env.env);
  client = createClient({ baseUrl: `${stack.apiUrl}/api` });
  await client.auth.register({ name: 'Pages', email: `pages-${process.pid}@example.com`, password: 'a long enough password' });
  browser = await launchChromium();
  mkdirSync(screenshots, { recursive: true });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await env?.close();
});

/** A page at `width` with `userAgent` (see the kit's openPage), collecting CSP refusals and script errors. */
const openPage = (width: number, userAgent?: string) => openPageIn(browser.context, width, { userAgent });

const shot = (page: Page, width: number, name: string) =>
  page.screenshot({ path: join(screenshots, `redirect-${width}-${name}.png`), fullPage: true });

/** What a finished page shows: the card centred and within the screen, the product's name, the page's own style applied. */
async function expectFinished(page: Page, width: number) {
  const layout = await page.evaluate(() => {
    const main = document.querySelector('main')!.getBoundingClientRect();
    return {
      overflow: document.documentElement.scrollWidth - window.innerWidth,
      left: main.left,
      right: window.innerWidth - main.right,
      background: getComputedStyle(document.body).backgroundColor,
      footer: document.querySelector('footer')?.textContent,
    };
  });
  expect(layout.overflow, `${width}px`).toBeLessThanOrEqual(0);
  // Centred: the margins either side differ by at most a pixel.
  expect(Math.abs(layout.left - layout.right), `${width}px`).toBeLessThanOrEqual(1);
  expect(layout.left, `${width}px`).toBeGreaterThan(0);
  // The stylesheet ran (the CSP allows it by hash): the body is not the default white.
  expect(layout.background).not.toBe('rgba(0, 0, 0, 0)');
  expect(layout.footer).toBe('Acme Links');
  expect(await axeViolations(page), `${width}px`).toEqual([]);
}

describe('dead-end pages', () => {
  it('shows the 404 and 410 pages as finished, branded cards at phone and desktop width', async () => {
    const expired = await client.links.create({
      title: 'Old sale',
      defaultUrl: 'https://example.com/old',
      expirationDate: new Date(Date.now() - 60_000),
    });
    for (const width of WIDTHS) {
      const { page, problems } = await openPage(width);
      const missing = await page.goto(`${stack.shortUrlBase}/no-such-link`);
      expect(missing!.status()).toBe(404);
      await expect.poll(() => page.title()).toBe('Link not found · Acme Links');
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Link not found');
      await expectFinished(page, width);
      await shot(page, width, '404');

      const gone = await page.goto(expired.url);
      expect(gone!.status()).toBe(410);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Link expired');
      await expectFinished(page, width);
      await shot(page, width, '410');
      expect(problems).toEqual([]);
      await page.close();
    }
  });
});

describe('the iOS page', () => {
  it('names the link and the app, offers the app first, and goes to the fallback after the timer, with no CSP violation', async () => {
    await client.apps.create({ platform: 'ios', name: 'Acme Shop', teamId: 'ABCDE12345', bundleId: 'com.acme.shop' });
    const link = await client.links.create({
      title: 'Internal name',
      defaultUrl: 'https://shop.example.test/shoes',
      iosLink: { url: 'acmeshop://shoes', bundleId: 'com.acme.shop', fallbackUrl: 'https://shop.example.test/ios' },
      socialPreview: { title: 'Running shoes, 20% off' },
    });
    for (const width of WIDTHS) {
      const { page, problems } = await openPage(width, UA.iphoneSafari);
      // The fallback is answered here: no network, and it proves the timer went there.
      let fallbackReached = false;
      await page.route('https://shop.example.test/**', (route) => {
        fallbackReached = route.request().url() === 'https://shop.example.test/ios';
        return route.fulfill({ status: 200, contentType: 'text/html', body: '<title>Fallback</title>' });
      });
      const started = Date.now();
      // Not until the load: the page's script navigates to the app at once (which the browser cannot open).
      const response = await page.goto(link.url, { waitUntil: 'commit' });
      expect(response!.status()).toBe(200);
      expect(response!.headers()['content-security-policy']).toContain("script-src 'sha256-");
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Running shoes, 20% off');
      const open = page.getByRole('link', { name: 'Open in Acme Shop' });
      const browserLink = page.getByRole('link', { name: 'Continue in the browser' });
      expect((await open.boundingBox())!.y).toBeLessThan((await browserLink.boundingBox())!.y);
      await shot(page, width, 'ios');

      await page.waitForURL('https://shop.example.test/ios', { timeout: 10_000 });
      expect(fallbackReached).toBe(true);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
      expect(problems).toEqual([]);
      await page.close();

      // The page as it stands before its timer fires, checked with the page's clock held (the
      // check would otherwise race the jump to the fallback).
      const held = await openPage(width, UA.iphoneSafari);
      await held.page.clock.install();
      await held.page.route('https://shop.example.test/**', (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '' }));
      await held.page.goto(link.url, { waitUntil: 'commit' });
      await held.page.locator('main').waitFor();
      await expectFinished(held.page, width);
      expect(held.problems).toEqual([]);
      await held.page.close();
    }
  });
});
