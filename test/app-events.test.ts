// The app funnel over real HTTP: the API, the redirector and the worker as real processes on real
// Redis, BullMQ and PostgreSQL. A visit sent on to an app store is a click and a REDIRECT; an
// app's open, sent to the API, is a first open or a re-open, counted once per openId.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickProducer, waitForIdle, type ClickProducer } from '@deeplink/test-kit/clicks';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { startStack, type Stack } from '@deeplink/test-kit/stack';
import { UA } from '@deeplink/test-kit/user-agents';

type PerPlatform = { ANDROID: number; IOS: number; DESKTOP: number; OTHER: number };
interface Report {
  totalClicks: number;
  appEvents: {
    counts: Record<'CLICK' | 'REDIRECT' | 'APP_INSTALL' | 'APP_FIRST_OPEN' | 'APP_RE_OPEN', PerPlatform>;
    conversion: Record<string, number | null>;
  };
}

let env: TestEnvironment;
let stack: Stack;
let producer: ClickProducer;
let token: string;
let androidKey: string;

const api = async (path: string, init: { method?: string; body?: object; headers?: Record<string, string> } = {}) => {
  const response = await fetch(`${stack.apiUrl}${path}`, {
    method: init.method ?? 'GET',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...init.headers },
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
    body: JSON.stringify({ name: 'Funnel', email: 'funnel@example.com', password: 'funnel password' }),
  });
  token = ((await register.json()) as { data: { token: string } }).data.token;
  const android = await api('/api/apps', {
    method: 'POST',
    body: { platform: 'android', packageName: 'com.example.shop', sha256CertFingerprints: [Array(32).fill('AB').join(':')] },
  });
  expect(android.status).toBe(201);
  androidKey = (android.body.data.app as { key: string }).key;
  const ios = await api('/api/apps', {
    method: 'POST',
    body: { platform: 'ios', teamId: 'ABCDE12345', bundleId: 'com.example.shop', appStoreId: '1234567890' },
  });
  expect(ios.status).toBe(201);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await producer?.close();
  await env?.close();
});

async function createLink(body: object): Promise<{ id: string; url: string }> {
  const created = await api('/api/links', { method: 'POST', body: { title: 'Funnel', defaultUrl: 'https://example.com/shop', ...body } });
  expect(created.status).toBe(201);
  return created.body.data.link as { id: string; url: string };
}

const visit = (url: string, userAgent: string) => fetch(url, { redirect: 'manual', headers: { 'user-agent': userAgent } });

/** The link's report once `ready` holds of it and the queue holds no batch that could still change it. */
async function settledReport(linkId: string, ready: (report: Report) => boolean): Promise<Report> {
  const report = async () => (await api(`/api/analytics/links/${linkId}`)).body.data.analytics as unknown as Report;
  await expect.poll(async () => ready(await report()), { timeout: 20_000, interval: 100 }).toBe(true);
  await waitForIdle(producer.queue);
  return report();
}

const platforms = (counts: Partial<PerPlatform>): PerPlatform => ({ ANDROID: 0, IOS: 0, DESKTOP: 0, OTHER: 0, ...counts });

describe('the app funnel', () => {
  it('counts an Android visit sent on to the Play Store as a click and a REDIRECT, and a desktop visit as a click only', async () => {
    const link = await createLink({ androidLink: { url: 'shop://promo', appPackageName: 'com.example.shop' } });
    const android = await visit(link.url, UA.androidChrome);
    expect(android.status).toBe(302);
    expect(decodeURIComponent(android.headers.get('location')!)).toContain(
      'S.browser_fallback_url=https://play.google.com/store/apps/details?id=com.example.shop',
    );
    expect((await visit(link.url, UA.windowsChrome)).status).toBe(302);

    const report = await settledReport(link.id, (r) => r.totalClicks >= 2);
    expect(report.totalClicks).toBe(2);
    expect(report.appEvents.counts.CLICK).toEqual(platforms({ ANDROID: 1, DESKTOP: 1 }));
    expect(report.appEvents.counts.REDIRECT).toEqual(platforms({ ANDROID: 1 }));
    expect(report.appEvents.conversion).toMatchObject({ redirectPerClick: 0.5, installPerRedirect: 0, firstOpenPerInstall: null });
  });

  it('counts an iPhone visit offered the App Store as a click and a REDIRECT', async () => {
    const link = await createLink({ iosLink: { url: 'shop://promo', bundleId: 'com.example.shop' } });
    const iphone = await visit(link.url, UA.iphoneSafari);
    expect(iphone.status).toBe(200);
    expect(await iphone.text()).toContain('https://apps.apple.com/app/id1234567890');

    const report = await settledReport(link.id, (r) => r.totalClicks >= 1 && r.appEvents.counts.REDIRECT.IOS >= 1);
    expect(report.totalClicks).toBe(1);
    expect(report.appEvents.counts.REDIRECT).toEqual(platforms({ IOS: 1 }));
  });

  it('counts no REDIRECT for a visit that goes to a web page', async () => {
    const link = await createLink({
      androidLink: { url: 'shop://promo', appPackageName: 'com.example.shop', fallbackUrl: 'https://example.com/get-the-app' },
    });
    expect((await visit(link.url, UA.androidChrome)).status).toBe(302);
    expect((await visit(link.url, UA.macSafari)).status).toBe(302);
    const report = await settledReport(link.id, (r) => r.totalClicks >= 2);
    expect(report.totalClicks).toBe(2);
    expect(report.appEvents.counts.REDIRECT).toEqual(platforms({}));
    expect(report.appEvents.conversion.redirectPerClick).toBe(0);
  });

  it("counts an app's first open and re-open once each, however often the same open is retried", async () => {
    const link = await createLink({ androidLink: { url: 'shop://promo', appPackageName: 'com.example.shop' } });
    const open = (openId: string, firstLaunch: boolean) =>
      api('/api/app/open', { method: 'POST', headers: { 'x-app-key': androidKey }, body: { url: link.url, openId, firstLaunch } });

    const first = await open(randomUUID(), true);
    expect(first.status).toBe(200);
    expect(first.body.data.deepLink).toBe('shop://promo');
    const reopen = randomUUID();
    for (let i = 0; i < 3; i++) expect((await open(reopen, false)).status).toBe(200);

    const report = await settledReport(
      link.id,
      (r) => r.appEvents.counts.APP_RE_OPEN.ANDROID >= 1 && r.appEvents.counts.APP_FIRST_OPEN.ANDROID >= 1,
    );
    expect(report.appEvents.counts.APP_FIRST_OPEN).toEqual(platforms({ ANDROID: 1 }));
    expect(report.appEvents.counts.APP_RE_OPEN).toEqual(platforms({ ANDROID: 1 }));
    // Opens are not clicks.
    expect(report.totalClicks).toBe(0);
    expect(report.appEvents.conversion.firstOpenPerClick).toBeNull();
  });

  it("gives in the summary's funnel the sum of every link's, whichever of these cases ran", async () => {
    const link = await createLink({ iosLink: { url: 'shop://promo', bundleId: 'com.example.shop' } });
    expect((await visit(link.url, UA.iphoneSafari)).status).toBe(200);
    await settledReport(link.id, (r) => r.appEvents.counts.REDIRECT.IOS >= 1);

    const links = (await api('/api/links?limit=100')).body.data.links as { id: string }[];
    const reports = await Promise.all(
      links.map(async ({ id }) => (await api(`/api/analytics/links/${id}`)).body.data.analytics as unknown as Report),
    );
    const summary = (await api('/api/analytics/summary?breakdowns=true')).body.data.summary as unknown as Report;
    for (const event of ['CLICK', 'REDIRECT', 'APP_FIRST_OPEN', 'APP_RE_OPEN'] as const) {
      const summed = platforms({});
      for (const report of reports)
        for (const platform of Object.keys(summed) as (keyof PerPlatform)[]) summed[platform] += report.appEvents.counts[event][platform];
      expect(summary.appEvents.counts[event], event).toEqual(summed);
    }
    expect(summary.appEvents.counts.REDIRECT.IOS).toBeGreaterThanOrEqual(1);
  });
});
