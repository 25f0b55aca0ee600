// Firebase Dynamic Links' REST API over real HTTP: the API, the redirector and the worker as real
// processes on real Redis, BullMQ and PostgreSQL. A short link made by POST /v1/shortLinks sends
// each platform where FDL would have sent it, and GET /v1/{shortLink}/linkStats counts the visits
// and app events the worker rolled up.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickProducer, waitForIdle, type ClickProducer } from '@deeplink/test-kit/clicks';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { startStack, type Stack } from '@deeplink/test-kit/stack';
import { UA } from '@deeplink/test-kit/user-agents';

let env: TestEnvironment;
let stack: Stack;
let producer: ClickProducer;
let token: string;
let key: string;
let androidKey: string;

const request = async (path: string, init: { method?: string; body?: object; headers?: Record<string, string> } = {}) => {
  const response = await fetch(`${stack.apiUrl}${path}`, {
    method: init.method ?? 'GET',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...init.headers },
    ...(init.body && { body: JSON.stringify(init.body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
};

/** POST /v1/shortLinks as a backend that called Firebase sends it: only the host and the key changed. */
async function shorten(body: object): Promise<string> {
  const response = await fetch(`${stack.apiUrl}/v1/shortLinks?key=${key}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as { shortLink: string; previewLink: string };
  expect(response.status, JSON.stringify(answer)).toBe(200);
  expect(answer.previewLink).toBe(`${answer.shortLink}?d=1`);
  return answer.shortLink;
}

const visit = (url: string, userAgent: string) => fetch(url, { redirect: 'manual', headers: { 'user-agent': userAgent } });

beforeAll(async () => {
  env = await createTestEnvironment({ RATE_LIMIT_MAX: '100000', RATE_LIMIT_AUTH_MAX: '1000' });
  stack = await startStack(env.env);
  producer = clickProducer(env);
  const register = await fetch(`${stack.apiUrl}/api/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Migrated', email: 'migrated@example.com', password: 'migrated password' }),
  });
  token = ((await register.json()) as { data: { token: string } }).data.token;
  key = (await request('/api/auth/api-keys', { method: 'POST', body: { name: 'backend' } })).body.data.apiKey.key;
  const android = await request('/api/apps', {
    method: 'POST',
    body: { platform: 'android', packageName: 'com.example.shop', sha256CertFingerprints: [Array(32).fill('AB').join(':')] },
  });
  expect(android.status).toBe(201);
  androidKey = android.body.data.app.key;
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await producer?.close();
  await env?.close();
});

describe('a short link made through the Firebase REST API', () => {
  it('sends Android to the app or the Play Store, iOS to its app page, desktop to its fallback', async () => {
    const shortLink = await shorten({
      dynamicLinkInfo: {
        domainUriPrefix: stack.shortUrlBase,
        link: 'https://shop.example.com/item/7',
        androidInfo: { androidPackageName: 'com.example.shop' },
        iosInfo: { iosBundleId: 'com.example.ios', iosAppStoreId: '1234567890' },
        desktopInfo: { desktopFallbackLink: 'https://shop.example.com/desktop' },
      },
      suffix: { option: 'SHORT' },
    });
    expect(new URL(shortLink).pathname).toMatch(/^\/[0-9A-Za-z]{4}$/);

    const android = await visit(shortLink, UA.androidChrome);
    expect(android.status).toBe(302);
    const intent = android.headers.get('location')!;
    expect(intent).toMatch(/^intent:\/\/shop\.example\.com\/item\/7#Intent;/);
    expect(intent).toContain('package=com.example.shop');
    expect(decodeURIComponent(intent)).toContain('https://play.google.com/store/apps/details?id=com.example.shop');

    const iphone = await visit(shortLink, UA.iphoneSafari);
    expect(iphone.status).toBe(200);
    const page = await iphone.text();
    expect(page).toContain('com.example.ios://google/link/?deep_link_id=');
    expect(page).toContain('https://apps.apple.com/app/id1234567890');

    const desktop = await visit(shortLink, UA.windowsChrome);
    expect(desktop.status).toBe(302);
    expect(desktop.headers.get('location')).toBe('https://shop.example.com/desktop');
  });

  it('sends Android visitors without the app to androidFallbackLink, and a long link the same way', async () => {
    const longDynamicLink = `${stack.shortUrlBase}/?link=${encodeURIComponent('https://shop.example.com/item/8')}&apn=com.example.shop&afl=${encodeURIComponent('https://shop.example.com/get-android')}`;
    const shortLink = await shorten({ longDynamicLink });
    const android = await visit(shortLink, UA.androidChrome);
    expect(android.status).toBe(302);
    expect(decodeURIComponent(android.headers.get('location')!)).toContain('S.browser_fallback_url=https://shop.example.com/get-android');
  });

  it('counts visits and app events rolled up by the worker in linkStats', async () => {
    const shortLink = await shorten({
      dynamicLinkInfo: { link: 'https://shop.example.com/item/9', androidInfo: { androidPackageName: 'com.example.shop' } },
    });
    expect((await visit(shortLink, UA.androidChrome)).status).toBe(302);
    expect((await visit(shortLink, UA.androidChrome)).status).toBe(302);
    expect((await visit(shortLink, UA.windowsChrome)).status).toBe(302);
    const opened = await request('/api/app/open', {
      method: 'POST',
      headers: { 'x-app-key': androidKey },
      body: { url: shortLink, openId: randomUUID(), firstLaunch: true },
    });
    expect(opened.status).toBe(200);

    const stats = async () =>
      (await (await fetch(`${stack.apiUrl}/v1/${encodeURIComponent(shortLink)}/linkStats?durationDays=1&key=${key}`)).json()) as {
        linkEventStats: { platform: string; count: string; event: string }[];
      };
    const count = (answer: Awaited<ReturnType<typeof stats>>, event: string, platform: string) =>
      Number(answer.linkEventStats.find((row) => row.event === event && row.platform === platform)?.count ?? 0);
    await expect
      .poll(
        async () => {
          const answer = await stats();
          return count(answer, 'CLICK', 'ANDROID') === 2 && count(answer, 'APP_FIRST_OPEN', 'ANDROID') === 1;
        },
        { timeout: 20_000, interval: 200 },
      )
      .toBe(true);
    await waitForIdle(producer.queue);
    expect((await stats()).linkEventStats).toEqual([
      { platform: 'ANDROID', count: '2', event: 'CLICK' },
      { platform: 'DESKTOP', count: '1', event: 'CLICK' },
      { platform: 'ANDROID', count: '2', event: 'REDIRECT' },
      { platform: 'ANDROID', count: '1', event: 'APP_FIRST_OPEN' },
    ]);
  });
});
