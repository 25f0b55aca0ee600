/// <reference lib="dom" />
// The app SDK in Debian's Chromium, as a web app or a Capacitor WebView runs it: a page on one
// origin resolves links through the API on another (CORS), and reads the typed errors, the 429's
// Retry-After included (real API, PostgreSQL, Redis).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createIosApp, createLink, listeningApi } from '../../packages/app-sdk/test/support.js';
import { launchChromium, openPage } from '@deeplink/test-kit/browser';

let api: Awaited<ReturnType<typeof listeningApi>>;
let browser: Awaited<ReturnType<typeof launchChromium>>;
const pages = createServer();
let pageOrigin: string;

beforeAll(async () => {
  // Two opens a window per app key: the third of the test is a 429.
  api = await listeningApi({ APP_RATE_LIMIT_MAX: '2' });
  const bundle = await build({
    entryPoints: [join(import.meta.dirname, '../../packages/app-sdk/src/index.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    write: false,
  });
  const script = bundle.outputFiles[0]!.text;
  pages.on('request', (request, response) => {
    if (request.url === '/app-sdk.js') response.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    // The page loads the SDK as a web app would and hands it to the test as `window.sdk`.
    else
      response
        .writeHead(200, { 'content-type': 'text/html' })
        .end(`<!doctype html><title>An app</title><script type="module">import * as sdk from '/app-sdk.js'; window.sdk = sdk;</script>`);
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  pageOrigin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  browser = await launchChromium();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => pages.close(resolve));
  await api?.api.close();
});

it('resolves a link from a page on another origin, and its errors are the typed classes', async () => {
  const user = await api.api.registerUser();
  const app = await createIosApp(api.api, user.token, 'com.acme.webapp');
  const link = await createLink(api.api, user.token, {
    iosLink: { url: 'acmeshop://product/7', bundleId: 'com.acme.webapp' },
    customParameters: { utm_source: 'web' },
  });
  const { page, problems } = await openPage(browser.context, 400);
  await page.goto(`${pageOrigin}/`);
  await page.waitForFunction(() => 'sdk' in window);
  expect(new URL(api.baseUrl).origin).not.toBe(pageOrigin);

  const outcome = await page.evaluate(
    async ({ baseUrl, appKey, linkUrl }) => {
      const sdk = (window as unknown as { sdk: typeof import('../../packages/app-sdk/src/index.js') }).sdk;
      const client = sdk.createDeepLinkClient({ baseUrl, appKey, retries: 0 });
      const found = await client.open(linkUrl);
      const describe = (error: { name: string; status?: number; retryAfterSeconds?: number }) => ({
        name: error.name,
        status: error.status,
        retryAfterSeconds: error.retryAfterSeconds,
        isSdkError: error instanceof sdk.AppSdkError,
      });
      const missing = await client.open(new URL('/no-such-code', linkUrl).href).catch(describe);
      const limited = await client.open(linkUrl).catch(describe);
      return { found, missing, limited };
    },
    { baseUrl: api.baseUrl, appKey: app.key, linkUrl: link.url },
  );

  expect(outcome.found).toEqual({
    link: { id: link.id, code: link.code, url: link.url },
    deepLink: 'acmeshop://product/7',
    parameters: { utm_source: 'web' },
    webUrl: 'https://shop.example.com/spring?utm_source=web',
  });
  expect(outcome.missing).toEqual({ name: 'LinkNotFoundError', status: 404, isSdkError: true });
  expect(outcome.limited).toMatchObject({ name: 'RateLimitedError', status: 429, isSdkError: true });
  // Readable only because the API exposes Retry-After to other origins.
  expect((outcome.limited as { retryAfterSeconds?: number }).retryAfterSeconds).toBeGreaterThanOrEqual(1);
  expect(problems).toEqual([]);
});
