/// <reference lib="dom" />
// A deferred deep link on iOS, end to end: an iPhone visitor without the app (Debian's Chromium with
// an iPhone agent and pasteboard permission) taps the iOS page's App Store button; the freshly
// installed app's first launch reads the pasteboard and resolves it through the app SDK. The
// redirector, the worker and the API run as real processes on real Redis, BullMQ and PostgreSQL.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createDeepLinkClient } from '../../packages/app-sdk/src/index.js';
import { launchChromium, openPage } from '@deeplink/test-kit/browser';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { startStack, type Stack } from '@deeplink/test-kit/stack';
import { UA } from '@deeplink/test-kit/user-agents';
import { allowPasteboard, tapStoreButton } from './install-token-support.js';

/** The app's App Store page, with the link's parameters as every web destination gets them. */
const APP_STORE = 'https://apps.apple.com/app/id1234567890?coupon=SPRING';
type PerPlatform = { ANDROID: number; IOS: number; DESKTOP: number; OTHER: number };

let env: TestEnvironment;
let stack: Stack;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let token: string;

const api = async (path: string, init: { method?: string; body?: object } = {}) => {
  const response = await fetch(`${stack.apiUrl}/api${path}`, {
    method: init.method ?? 'GET',
    headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
    ...(init.body && { body: JSON.stringify(init.body) }),
  });
  return { status: response.status, data: ((await response.json()) as { data: Record<string, unknown> }).data };
};

beforeAll(async () => {
  env = await createTestEnvironment({ RATE_LIMIT_MAX: '100000', RATE_LIMIT_AUTH_MAX: '1000' });
  stack = await startStack(env.env);
  browser = await launchChromium();
  await allowPasteboard(browser.context);
  const registered = await api('/auth/register', {
    method: 'POST',
    body: { name: 'Acme', email: 'acme@example.com', password: 'acme password 0123' },
  });
  token = registered.data.token as string;
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await env?.close();
});

it('takes an iPhone visitor through the App Store to the installed app, which gets the link from the pasteboard, counted once at each step', async () => {
  const app = await api('/apps', {
    method: 'POST',
    body: { platform: 'ios', name: 'Acme Shop', teamId: 'ABCDE12345', bundleId: 'com.acme.shop', appStoreId: '1234567890' },
  });
  expect(app.status).toBe(201);
  const sdk = createDeepLinkClient({ baseUrl: `${stack.apiUrl}/api`, appKey: (app.data.app as { key: string }).key });
  const created = await api('/links', {
    method: 'POST',
    body: {
      title: 'Spring',
      defaultUrl: 'https://example.com/spring',
      iosLink: { url: 'acmeshop://product/42', bundleId: 'com.acme.shop', minimumVersion: '2.4' },
      customParameters: { coupon: 'SPRING' },
    },
  });
  expect(created.status).toBe(201);
  const link = created.data.link as { id: string; url: string };

  // The visit: the page tries the app (not installed), and stays until the visitor taps the store button.
  const { page, problems } = await openPage(browser.context, 390, { userAgent: UA.iphoneSafari });
  await page.setExtraHTTPHeaders({ 'user-agent': UA.iphoneSafari, 'accept-language': 'en-GB,en;q=0.9' });
  expect((await page.goto(link.url, { waitUntil: 'commit' }))!.status()).toBe(200);
  // The page's script has tried the app by then (it starts at the end of the page, which a load
  // event would not wait for here: the app's scheme never loads).
  await page.waitForTimeout(2_000);
  expect(page.url()).toBe(link.url);
  const pasteboard = await tapStoreButton(page, 'Get Acme Shop on the App Store', APP_STORE);
  expect(problems).toEqual([]);
  await page.close();

  // The first launch after the install: the app reads the pasteboard (UIPasteControl) and hands it over.
  const installId = randomUUID();
  const resolve = () => sdk.install({ installId, pasteboard });
  // The worker stores the visit's token within moments of the visit; the same install may ask again.
  await expect.poll(async () => (await resolve()).match?.matchedBy, { timeout: 20_000, interval: 200 }).toBe('pasteboard');
  expect((await resolve()).match).toMatchObject({
    deepLink: 'acmeshop://product/42',
    minimumVersion: '2.4',
    parameters: { coupon: 'SPRING' },
    link: { id: link.id, url: link.url },
  });
  // Another device that somehow holds the same URL gets nothing.
  expect((await sdk.install({ installId: randomUUID(), pasteboard })).match).toBeNull();

  const only = (counts: Partial<PerPlatform>): PerPlatform => ({ ANDROID: 0, IOS: 0, DESKTOP: 0, OTHER: 0, ...counts });
  const funnel = async () =>
    ((await api(`/analytics/links/${link.id}`)).data.analytics as { appEvents: { counts: Record<string, PerPlatform> } }).appEvents.counts;
  await expect.poll(async () => (await funnel()).APP_FIRST_OPEN!.IOS, { timeout: 20_000, interval: 200 }).toBe(1);
  const counts = await funnel();
  expect(counts.CLICK).toEqual(only({ IOS: 1 }));
  expect(counts.REDIRECT).toEqual(only({ IOS: 1 }));
  expect(counts.APP_INSTALL).toEqual(only({ IOS: 1 }));
  expect(counts.APP_FIRST_OPEN).toEqual(only({ IOS: 1 }));
});
