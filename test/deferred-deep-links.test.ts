// Deferred deep links through an install, over real HTTP: the redirector, the worker and the API as
// real processes on real Redis, BullMQ and PostgreSQL, and the app SDK as an app ships it. A phone
// without the app follows a link to the store; the freshly installed app's first launch hands back
// what the store or the pasteboard kept, and gets the link; the funnel counts each step once.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickProducer, waitForIdle, type ClickProducer } from '@deeplink/test-kit/clicks';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { startStack, type Stack } from '@deeplink/test-kit/stack';
import { UA } from '@deeplink/test-kit/user-agents';
import { createDeepLinkClient, type DeepLinkClient } from '../packages/app-sdk/src/index.js';

type PerPlatform = { ANDROID: number; IOS: number; DESKTOP: number; OTHER: number };
type Funnel = Record<'CLICK' | 'REDIRECT' | 'APP_INSTALL' | 'APP_FIRST_OPEN' | 'APP_RE_OPEN', PerPlatform>;
interface Report {
  totalClicks: number;
  appEvents: { counts: Funnel };
}

const CUSTOM_HOST = 'go.shop.example';
let env: TestEnvironment;
let stack: Stack;
let producer: ClickProducer;
let token: string;
let android: DeepLinkClient;

const api = async (path: string, init: { method?: string; body?: object } = {}) => {
  const response = await fetch(`${stack.apiUrl}${path}`, {
    method: init.method ?? 'GET',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    ...(init.body && { body: JSON.stringify(init.body) }),
  });
  return { status: response.status, body: (await response.json()) as { data: Record<string, unknown> } };
};

beforeAll(async () => {
  env = await createTestEnvironment({ RATE_LIMIT_MAX: '100000', RATE_LIMIT_AUTH_MAX: '1000' });
  stack = await startStack(env.env);
  producer = clickProducer(env);
  const register = await fetch(`${stack.apiUrl}/api/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Shop', email: 'shop@example.com', password: 'shop password 0123' }),
  });
  token = ((await register.json()) as { data: { token: string } }).data.token;
  const app = await api('/api/apps', {
    method: 'POST',
    body: { platform: 'android', packageName: 'com.example.shop', sha256CertFingerprints: [Array(32).fill('AB').join(':')] },
  });
  expect(app.status).toBe(201);
  android = createDeepLinkClient({ baseUrl: `${stack.apiUrl}/api`, appKey: (app.body.data.app as { key: string }).key });
  // The account's custom domain, active as DNS verification would leave it (this test has no DNS to prove it with).
  const me = await api('/api/auth/me');
  await env.sql`INSERT INTO domains (user_id, hostname, verification_token, verified_at)
    VALUES (${(me.body.data.user as { id: string }).id}, ${CUSTOM_HOST}, 'proof', now())`;
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await producer?.close();
  await env?.close();
});

async function createLink(body: object): Promise<{ id: string; url: string; code: string }> {
  const created = await api('/api/links', { method: 'POST', body: { title: 'Spring', defaultUrl: 'https://example.com/spring', ...body } });
  expect(created.status).toBe(201);
  const link = created.body.data.link as { id: string; url: string };
  return { ...link, code: new URL(link.url).pathname.slice(1) };
}

/** The link's funnel once `ready` holds of it and the queue holds no batch that could still change it. */
async function settledFunnel(linkId: string, ready: (report: Report) => boolean): Promise<Report> {
  const report = async () => (await api(`/api/analytics/links/${linkId}`)).body.data.analytics as unknown as Report;
  await expect.poll(async () => ready(await report()), { timeout: 20_000, interval: 100 }).toBe(true);
  await waitForIdle(producer.queue);
  return report();
}

const only = (counts: Partial<PerPlatform>): PerPlatform => ({ ANDROID: 0, IOS: 0, DESKTOP: 0, OTHER: 0, ...counts });

/**
 * The referrer Google Play hands a fresh install (InstallReferrerClient's getInstallReferrer()):
 * the `referrer` parameter of the Play URL the visitor was sent to, decoded once. On Android the
 * Play URL is the intent's S.browser_fallback_url, itself encoded in the intent.
 */
function playReferrer(intentLocation: string): string {
  const extra = /;S\.browser_fallback_url=([^;]+);/.exec(intentLocation);
  expect(extra, intentLocation).not.toBeNull();
  const playUrl = new URL(decodeURIComponent(extra![1]!));
  expect(playUrl.hostname).toBe('play.google.com');
  expect(playUrl.searchParams.get('id')).toBe('com.example.shop');
  return playUrl.searchParams.get('referrer')!;
}

describe('a deferred deep link on Android', () => {
  it('goes from a visit without the app, through the Play Store, to the installed app, counted once at each step', async () => {
    const link = await createLink({
      androidLink: { url: 'shop://product/42', appPackageName: 'com.example.shop', minimumVersion: '31' },
      customParameters: { utm_source: 'poster', coupon: 'SPRING' },
    });
    const visit = await fetch(link.url, { redirect: 'manual', headers: { 'user-agent': UA.androidChrome, 'accept-language': 'fr-FR,fr' } });
    expect(visit.status).toBe(302);
    const referrer = playReferrer(visit.headers.get('location')!);
    // Play Console keeps its campaign attribution: the link's utm_* ride along with the token.
    expect(new URLSearchParams(referrer).get('utm_source')).toBe('poster');
    expect(new URLSearchParams(referrer).get('dl_token')).toMatch(/^[A-Za-z0-9_-]{22}$/);
    // The worker has the visit (and its token) before the app is installed.
    await settledFunnel(link.id, (r) => r.appEvents.counts.REDIRECT.ANDROID === 1);

    const installId = randomUUID();
    const installed = await android.install({ installId, referrer });
    expect(installed.match).toMatchObject({
      matchedBy: 'install-referrer',
      deepLink: 'shop://product/42',
      minimumVersion: '31',
      parameters: { utm_source: 'poster', coupon: 'SPRING' },
      link: { id: link.id, code: link.code, url: link.url },
    });
    expect(installed.match!.confidence).toBeUndefined();
    // The same install asking again (a retry, a crash before it stored the answer) gets the same link.
    expect((await android.install({ installId, referrer })).match).toMatchObject({ link: { id: link.id } });
    // Another install with the same referrer gets nothing: a token is spent by the install that claimed it.
    expect((await android.install({ installId: randomUUID(), referrer })).match).toBeNull();

    // The next launch is a re-open of the link the app was opened with.
    await android.open(link.url, { openId: randomUUID(), firstLaunch: false });

    const report = await settledFunnel(
      link.id,
      (r) => r.appEvents.counts.APP_RE_OPEN.ANDROID === 1 && r.appEvents.counts.APP_INSTALL.ANDROID === 1,
    );
    expect(report.totalClicks).toBe(1);
    expect(report.appEvents.counts.CLICK).toEqual(only({ ANDROID: 1 }));
    expect(report.appEvents.counts.REDIRECT).toEqual(only({ ANDROID: 1 }));
    expect(report.appEvents.counts.APP_INSTALL).toEqual(only({ ANDROID: 1 }));
    expect(report.appEvents.counts.APP_FIRST_OPEN).toEqual(only({ ANDROID: 1 }));
    expect(report.appEvents.counts.APP_RE_OPEN).toEqual(only({ ANDROID: 1 }));
  });

  it('hands each visit its own token, and a referrer without one (an organic install) matches nothing', async () => {
    const link = await createLink({ androidLink: { url: 'shop://home', appPackageName: 'com.example.shop' } });
    const referrers = await Promise.all(
      [1, 2].map(async () => {
        const visit = await fetch(link.url, { redirect: 'manual', headers: { 'user-agent': UA.androidChrome } });
        return playReferrer(visit.headers.get('location')!);
      }),
    );
    expect(new URLSearchParams(referrers[0]).get('dl_token')).not.toBe(new URLSearchParams(referrers[1]).get('dl_token'));
    expect((await android.install({ installId: randomUUID(), referrer: 'utm_source=google-play&utm_medium=organic' })).match).toBeNull();
  });
});

describe('an App Link open on a custom domain', () => {
  it('resolves the link there and counts the open once however often it is retried', async () => {
    const link = await createLink({ domain: CUSTOM_HOST, androidLink: { url: 'shop://sale', appPackageName: 'com.example.shop' } });
    expect(new URL(link.url).hostname).toBe(CUSTOM_HOST);
    const openId = randomUUID();
    for (let i = 0; i < 3; i++) {
      const opened = await android.open(`https://${CUSTOM_HOST}/${link.code}?utm_medium=email`, { openId, firstLaunch: false });
      expect(opened).toMatchObject({ deepLink: 'shop://sale', link: { id: link.id } });
    }
    const report = await settledFunnel(link.id, (r) => r.appEvents.counts.APP_RE_OPEN.ANDROID >= 1);
    expect(report.appEvents.counts.APP_RE_OPEN).toEqual(only({ ANDROID: 1 }));
    expect(report.totalClicks).toBe(0);
  });
});
