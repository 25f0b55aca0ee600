/// <reference lib="dom" />
// The callbacks given to page.evaluate() run in the page: they use the DOM's globals.
// The analysts' drill-down in Debian's Chromium against the whole stack: filtering a link's page
// by a country chosen in its breakdown, the filters in the address (a reload keeps them, the
// numbers are the API's under the same filters, back goes to the view before), negating and
// removing a chip, and the live panel counting visits sent through the real redirector.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createClient,
  type DeeplinkClient,
  type Link,
  type LinkAnalytics,
  type SummaryAnalyticsQuery,
} from '../../packages/client/src/index.js';
import { axeViolations } from '@deeplink/test-kit/axe';
import { launchChromium, openPage } from '@deeplink/test-kit/browser';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { startStack, type Stack } from '@deeplink/test-kit/stack';
import { UA } from '@deeplink/test-kit/user-agents';

const screenshots = join(import.meta.dirname, '../../.screenshots');
/** Public addresses the bundled GeoIP database places in these countries. */
const ADDRESSES = { US: '8.8.8.8', GB: '81.2.69.160', JP: '133.1.0.1' };

let env: TestEnvironment;
let stack: Stack;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let client: DeeplinkClient;
let token: string;
let page: Page;
let problems: string[];
let link: Link;
let storedSession: string;

/** Signs a tab in as the dashboard does: the session in the tab's own sessionStorage. */
async function signIn(tab: Page): Promise<void> {
  await tab.goto(`${stack.apiUrl}/`);
  await tab.evaluate((stored) => sessionStorage.setItem('deeplink.session', stored), storedSession);
}

/** A visit through the redirector, from `address` with `userAgent` (and a referrer when given). */
async function visit(userAgent: string, address: string, referrer?: string): Promise<void> {
  const headers: Record<string, string> = { 'user-agent': userAgent, 'x-forwarded-for': address };
  if (referrer) headers.referer = referrer;
  const response = await fetch(link.url, { redirect: 'manual', headers });
  expect([200, 302]).toContain(response.status);
}

/** The link report the page last asked the API for, and the same request sent again by the test. */
async function lastReportAndTheApis(trigger: () => Promise<unknown>): Promise<{ url: URL; shown: LinkAnalytics }> {
  const [response] = await Promise.all([
    page.waitForResponse((candidate) => new URL(candidate.url()).pathname === `/api/analytics/links/${link.id}` && candidate.ok()),
    trigger(),
  ]);
  const url = new URL(response.url());
  const api = (await (await fetch(url, { headers: { authorization: `Bearer ${token}` } })).json()) as {
    data: { analytics: LinkAnalytics };
  };
  return { url, shown: api.data.analytics };
}

/** The totals and the countries as the page shows them (the countries card switched to its table). */
async function shownNumbers(): Promise<{ total: string; unique: string; countries: Record<string, number> }> {
  const card = (label: string) => page.locator('.total', { hasText: label }).locator('.total-value').textContent();
  const countries = page.getByRole('region', { name: 'Countries' });
  const toggle = countries.getByRole('button', { name: /^Show as (table|chart)$/ });
  if ((await toggle.textContent()) === 'Show as table') await toggle.click();
  const rows = await countries
    .locator('tbody tr')
    .evaluateAll((trs) => trs.map((tr) => [tr.children[0]!.textContent!, Number(tr.children[1]!.textContent)] as const));
  return { total: (await card('Total clicks'))!, unique: (await card('Unique clicks'))!, countries: Object.fromEntries(rows) };
}

/** What the page must show for a report of the API. */
const expected = (report: LinkAnalytics) => ({
  total: String(report.totalClicks),
  unique: String(report.uniqueClicks),
  countries: Object.fromEntries(
    Object.entries(report.countries).map(([code, clicks]) => [
      /^[A-Z]{2}$/.test(code) ? `${new Intl.DisplayNames(['en'], { type: 'region' }).of(code)} (${code})` : code,
      clicks,
    ]),
  ),
});

/** Waits until the page's numbers are those of the API's answer to the page's own last request. */
async function expectTheApisNumbers(trigger: () => Promise<unknown>): Promise<URL> {
  const { url, shown } = await lastReportAndTheApis(trigger);
  await expect.poll(() => page.getByRole('status').filter({ hasText: 'Loading…' }).count()).toBe(0);
  expect(await shownNumbers()).toEqual(expected(shown));
  return url;
}

beforeAll(async () => {
  env = await createTestEnvironment({ TRUST_PROXY: '1', RATE_LIMIT_AUTH_MAX: '1000' });
  stack = await startStack(env.env);
  browser = await launchChromium();
  mkdirSync(screenshots, { recursive: true });
  client = createClient({ baseUrl: `${stack.apiUrl}/api` });
  const session = await client.auth.register({
    name: 'Ana Lyst',
    email: `analyst-${Date.now()}@example.com`,
    password: 'a long enough password',
  });
  token = session.token;
  link = await client.links.create({ title: 'Drill-down', defaultUrl: 'https://example.com/drill' });
  storedSession = JSON.stringify(session);
  ({ page, problems } = await openPage(browser.context, 1280));
  await signIn(page);
}, 90_000);

afterAll(async () => {
  expect(problems).toEqual([]);
  await browser?.close();
  await stack?.stop();
  await env?.close();
});

describe("a link's page, drilled down", () => {
  it('filters the whole page by a country chosen in its breakdown, with the numbers the API gives under that filter', async () => {
    await visit(UA.androidChrome, ADDRESSES.US, 'https://t.co/abc');
    await visit(UA.iphoneSafari, ADDRESSES.US);
    await visit(UA.iphoneSafari, ADDRESSES.GB);
    await visit(UA.windowsChrome, ADDRESSES.JP);
    await expect.poll(async () => (await client.analytics.link(link.id)).totalClicks, { timeout: 20_000, interval: 500 }).toBe(4);

    await expectTheApisNumbers(() => page.goto(`${stack.apiUrl}/links/${link.id}?range=24h`));
    expect((await shownNumbers()).total).toBe('4');
    expect(await page.getByText('Choose a row of any breakdown').isVisible()).toBe(true);
    // The OS and the link previews are shown like the rest.
    expect(await page.getByRole('region', { name: 'Operating systems' }).isVisible()).toBe(true);
    expect(await page.locator('.total', { hasText: 'Link previews' }).locator('.total-value').textContent()).toBe('0');

    // The bars' row for the United States is a button; so is its row in the table.
    const countries = page.getByRole('region', { name: 'Countries' });
    await countries.getByRole('button', { name: 'Show as chart' }).click();
    const url = await expectTheApisNumbers(() =>
      countries.getByRole('button', { name: /^Filter by Country United States \(US\)/ }).click(),
    );
    expect(url.searchParams.getAll('country')).toEqual(['US']);
    expect(new URL(page.url()).searchParams.getAll('country')).toEqual(['US']);
    expect(new URL(page.url()).searchParams.get('range')).toBe('24h');
    expect(await page.getByTestId('filter-chip').allTextContents()).toEqual([expect.stringContaining('Country is United States (US)')]);
    const filtered = await shownNumbers();
    expect(filtered).toMatchObject({ total: '2', unique: '2', countries: { 'United States (US)': 2 } });
    // Every breakdown is of the matching clicks only.
    await page.getByRole('region', { name: 'Platforms' }).getByRole('button', { name: 'Show as table' }).click();
    const platforms = await page
      .getByRole('region', { name: 'Platforms' })
      .locator('tbody tr')
      .evaluateAll((trs) => trs.map((tr) => `${tr.children[0]!.textContent}=${tr.children[1]!.textContent}`));
    expect(platforms).toEqual(['Android=1', 'iOS=1', 'Desktop=0']);
    expect(await axeViolations(page), 'drilldown-country').toEqual([]);
    await page.screenshot({ path: join(screenshots, '1280-drilldown-country.png'), fullPage: true });
  });

  it('keeps the filter through a reload, with the same numbers as the API', async () => {
    const before = await shownNumbers();
    const url = await expectTheApisNumbers(() => page.reload());
    expect(url.searchParams.getAll('country')).toEqual(['US']);
    expect(await shownNumbers()).toEqual(before);
    expect(await page.getByRole('button', { name: 'Remove filter: Country is United States (US)' }).isVisible()).toBe(true);

    // The same address at phone width: the same view, and nothing wider than the window.
    const phone = await openPage(browser.context, 360);
    await signIn(phone.page);
    await phone.page.goto(page.url());
    await expect.poll(() => phone.page.getByTestId('filter-chip').count()).toBe(1);
    await expect.poll(() => phone.page.locator('.total', { hasText: 'Total clicks' }).locator('.total-value').textContent()).toBe('2');
    expect(await phone.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    expect(await axeViolations(phone.page), 'drilldown-country at 360 px').toEqual([]);
    await phone.page.screenshot({ path: join(screenshots, '360-drilldown-country.png'), fullPage: true });
    expect(phone.problems).toEqual([]);
    await phone.page.close();
  });

  it('negates a chip, goes back to the view before, and removes the chip', async () => {
    await expectTheApisNumbers(() => page.getByRole('button', { name: 'Exclude instead: Country is United States (US)' }).click());
    expect(new URL(page.url()).searchParams.getAll('notCountry')).toEqual(['US']);
    expect(new URL(page.url()).searchParams.has('country')).toBe(false);
    expect(await page.getByTestId('filter-chip').allTextContents()).toEqual([expect.stringContaining('Country is not United States (US)')]);
    expect((await shownNumbers()).total).toBe('2');
    expect((await shownNumbers()).countries).toMatchObject({ 'Japan (JP)': 1, 'United Kingdom (GB)': 1 });

    // Back: the included filter again, its numbers again.
    await expectTheApisNumbers(() => page.goBack());
    expect(new URL(page.url()).searchParams.getAll('country')).toEqual(['US']);
    expect((await shownNumbers()).total).toBe('2');

    // A second filter, then each removed by its own chip.
    await expectTheApisNumbers(() =>
      page
        .getByRole('region', { name: 'Platforms' })
        .getByRole('button', { name: /^Filter by Platform iOS/ })
        .click(),
    );
    expect(await page.getByTestId('filter-chip').count()).toBe(2);
    expect((await shownNumbers()).total).toBe('1');
    await expectTheApisNumbers(() => page.getByRole('button', { name: 'Remove filter: Country is United States (US)' }).click());
    expect(await page.getByTestId('filter-chip').allTextContents()).toEqual([expect.stringContaining('Platform is iOS')]);
    expect((await shownNumbers()).total).toBe('2');
    await expectTheApisNumbers(() => page.getByRole('button', { name: 'Remove filter: Platform is iOS' }).click());
    expect(await page.getByTestId('filter-chip').count()).toBe(0);
    expect((await shownNumbers()).total).toBe('4');
    expect(new URL(page.url()).search).toBe('?range=24h');
  });

  it('counts visits sent through the redirector in the live panel, without a refresh', async () => {
    const live = page.getByRole('region', { name: 'Live' });
    await expect.poll(() => live.getByTestId('live-state').textContent(), { timeout: 10_000 }).toBe('Live');
    expect(await live.getByTestId('live-clicks').textContent()).toBe('0');
    await visit(UA.androidChrome, ADDRESSES.GB, 'https://news.example.org/a');
    await visit(UA.iphoneSafari, ADDRESSES.JP);
    await visit(UA.windowsChrome, ADDRESSES.US);
    await expect.poll(() => live.getByTestId('live-clicks').textContent(), { timeout: 20_000 }).toBe('3');
    const rows = await live
      .locator('tbody tr')
      .evaluateAll((trs) => trs.map((tr) => Array.from(tr.children, (cell) => cell.textContent ?? '').slice(1)));
    expect(rows.map((row) => row.join(' | ')).sort()).toEqual(
      [
        'Android | United Kingdom (GB) | Chrome | news.example.org',
        'Desktop | United States (US) | Chrome | direct',
        'iOS | Japan (JP) | Mobile Safari | direct',
      ].sort(),
    );
    expect(Number(await live.getByTestId('live-rate').textContent())).toBeGreaterThan(0);
    expect(await axeViolations(page), 'drilldown-live').toEqual([]);
    await page.screenshot({ path: join(screenshots, '1280-drilldown-live.png'), fullPage: true });

    // Hidden, the page closes its stream; shown again, it resumes after the last message it had,
    // so the clicks of the hidden time are counted too.
    const streamUrl = `${stack.apiUrl}/api/analytics/links/${link.id}/live`;
    const setHidden = (hidden: boolean) =>
      page.evaluate((value) => {
        Object.defineProperty(document, 'visibilityState', { value: value ? 'hidden' : 'visible', configurable: true });
        document.dispatchEvent(new Event('visibilitychange'));
      }, hidden);
    await Promise.all([page.waitForEvent('requestfailed', (request) => request.url() === streamUrl), setHidden(true)]);
    expect(await live.getByTestId('live-state').textContent()).toBe('Stopped');
    await visit(UA.androidChrome, ADDRESSES.JP);
    await expect.poll(async () => (await client.analytics.link(link.id)).totalClicks, { timeout: 20_000, interval: 500 }).toBe(8);
    expect(await live.getByTestId('live-clicks').textContent()).toBe('3');
    const [resumed] = await Promise.all([page.waitForRequest(streamUrl), setHidden(false)]);
    expect(resumed.headers()['last-event-id']).toMatch(/\S/);
    await expect.poll(() => live.getByTestId('live-clicks').textContent(), { timeout: 10_000 }).toBe('4');

    // The account's panel on the overview counts them too.
    await page.getByRole('link', { name: 'Overview' }).click();
    const accountLive = page.getByRole('region', { name: 'Live' });
    await expect.poll(() => accountLive.getByTestId('live-state').textContent(), { timeout: 10_000 }).toBe('Live');
    await visit(UA.iphoneSafari, ADDRESSES.GB);
    await expect.poll(() => accountLive.getByTestId('live-clicks').textContent(), { timeout: 20_000 }).toBe('1');
  });

  it('filters the overview by a value chosen in its breakdowns', async () => {
    await expect.poll(async () => (await client.analytics.link(link.id)).totalClicks, { timeout: 20_000, interval: 500 }).toBe(9);
    await page.reload();
    const card = (label: string) => page.locator('.total', { hasText: label }).locator('.total-value');
    await expect.poll(() => card('Clicks, last 30 days').textContent(), { timeout: 10_000 }).toBe('9');
    const [response] = await Promise.all([
      page.waitForResponse(
        (candidate) => candidate.url().includes('/api/analytics/summary?') && candidate.url().includes('breakdowns=true'),
      ),
      page
        .getByRole('region', { name: 'Countries' })
        .getByRole('button', { name: /^Filter by Country Japan \(JP\)/ })
        .click(),
    ]);
    expect(new URL(response.url()).searchParams.getAll('country')).toEqual(['JP']);
    expect(new URL(page.url()).search).toBe('?country=JP');
    // The same request from the test: the page's numbers are the API's.
    const summary = await client.analytics.summary(Object.fromEntries(new URL(response.url()).searchParams) as SummaryAnalyticsQuery);
    await expect.poll(() => card('Clicks, last 30 days').textContent()).toBe(String(summary.totalClicks));
    expect(summary.totalClicks).toBe(3);
    // The top links are those of the matching clicks of the 30 days; the all-time total is left out.
    const top = page.getByRole('region', { name: 'Top links, last 30 days' });
    await top.getByRole('button', { name: 'Show as table' }).click();
    expect(await top.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.textContent))).toEqual(['Drill-down3100%']);
    expect(await page.locator('.total', { hasText: /^Total clicks/ }).count()).toBe(0);
    // A top link opens its page under the same filter.
    await top.getByRole('button', { name: /^Open Drill-down( 3 clicks)?$/ }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Drill-down' }).isVisible()).toBe(true);
    expect(new URL(page.url()).search).toBe('?country=JP');
    await expect.poll(() => page.locator('.total', { hasText: 'Total clicks' }).locator('.total-value').textContent()).toBe('3');
  });
});
