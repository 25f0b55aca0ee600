/// <reference lib="dom" />
// The callbacks given to page.evaluate() run in the page: they use the DOM's globals.
// The dashboard in Debian's Chromium against the whole stack (API serving the dashboard, redirector,
// worker, real Redis and PostgreSQL): what a marketer does, at phone width (360 px) and desktop
// width (1280 px). Screenshots go to .screenshots/ (git-ignored).
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../packages/client/src/index.js';
import { axeViolations } from '@deeplink/test-kit/axe';
import { launchChromium, openPage as openPageIn } from '@deeplink/test-kit/browser';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { decodeQrPng } from '@deeplink/test-kit/qr';
import { startStack, type Stack } from '@deeplink/test-kit/stack';
import { UA } from '@deeplink/test-kit/user-agents';

const screenshots = join(import.meta.dirname, '../../.screenshots');
/** Public addresses the bundled GeoIP database places in these countries. */
const ADDRESSES = { US: '8.8.8.8', GB: '81.2.69.160', JP: '133.1.0.1' };

let env: TestEnvironment;
let stack: Stack;
let browser: Awaited<ReturnType<typeof launchChromium>>;

beforeAll(async () => {
  env = await createTestEnvironment({ TRUST_PROXY: '1', RATE_LIMIT_AUTH_MAX: '1000' });
  stack = await startStack(env.env);
  browser = await launchChromium();
  mkdirSync(screenshots, { recursive: true });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await env?.close();
});

/** A page at `width` (see the kit's openPage); the test fails on any script error or CSP refusal it collects. */
const openPage = (width: number) => openPageIn(browser.context, width);

/**
 * Checks the page as it is now: no axe violation, and it fits its width (wide tables scroll inside
 * their own box); then saves a screenshot.
 */
async function shot(page: Page, width: number, name: string): Promise<void> {
  expect(await axeViolations(page), name).toEqual([]);
  expect(await page.evaluate(() => document.documentElement.scrollWidth), `${name} fits ${width} px`).toBeLessThanOrEqual(width);
  await page.screenshot({ path: join(screenshots, `${width}-${name}.png`), fullPage: true });
}

/** The numbers of a table alternative, by its first column. */
async function tableOf(page: Page, card: string): Promise<Record<string, number>> {
  const section = page.getByRole('region', { name: card });
  const rows = await section
    .locator('tbody tr')
    .evaluateAll((trs) => trs.map((tr) => [tr.children[0]!.textContent!, Number(tr.children[1]!.textContent)] as const));
  return Object.fromEntries(rows);
}

/** Switches a card to its table (waiting for the card to be there). */
async function showTable(page: Page, card: string): Promise<void> {
  const toggle = page.getByRole('region', { name: card }).getByRole('button', { name: /^Show as (table|chart)$/ });
  if ((await toggle.textContent()) === 'Show as table') await toggle.click();
}

describe.each([1280, 360])('the dashboard at %i px', (width) => {
  let page: Page;
  let problems: string[];
  let shortUrl: string;
  const email = `marketer-${width}-${Date.now()}@example.com`;

  beforeAll(async () => {
    ({ page, problems } = await openPage(width));
  });
  afterAll(async () => {
    expect(problems).toEqual([]);
    await page.close();
  });

  it('creates an account, keeps the token out of localStorage, and signs out on a 401', async () => {
    await page.goto(`${stack.apiUrl}/`);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByLabel('Name').fill('Mia Marketer');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('a long enough password');
    await shot(page, width, 'create-account');
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Overview' }).isVisible()).toBe(true);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    expect(await page.evaluate(() => JSON.parse(sessionStorage.getItem('deeplink.session') ?? '{}').user?.email)).toBe(email);

    // A token the API no longer accepts: the next call is a 401 and the dashboard signs out.
    await page.evaluate(() => {
      const session = JSON.parse(sessionStorage.getItem('deeplink.session')!);
      sessionStorage.setItem('deeplink.session', JSON.stringify({ ...session, token: 'expired' }));
    });
    await page.reload();
    await expect.poll(() => page.getByRole('heading', { name: 'Sign in' }).isVisible()).toBe(true);
    expect(await page.evaluate(() => sessionStorage.getItem('deeplink.session'))).toBeNull();

    // A wrong password is refused with the API's message…
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/\S/);
    await shot(page, width, 'sign-in-refused');
    // …and the right one, typed with the keyboard alone, signs in.
    await page.getByLabel('Email').fill('');
    await page.getByLabel('Password').fill('');
    await page.getByLabel('Email').focus();
    await page.keyboard.type(email);
    await page.keyboard.press('Tab');
    await page.keyboard.type('a long enough password');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('heading', { name: 'Overview' }).isVisible()).toBe(true);
  });

  it("shows what to do first on an empty list, then creates a link with every platform, showing the API's field error first", async () => {
    await page.getByRole('link', { name: 'Links', exact: true }).click();
    await expect.poll(() => page.getByText('No links yet').isVisible()).toBe(true);
    await shot(page, width, 'links-empty');
    await page.getByRole('link', { name: 'Create your first link' }).click();

    await page.getByLabel(/^Title/).fill('Spring sale');
    await page.getByLabel('Default URL').fill('https://example.com/sale');
    const android = page.getByRole('group', { name: 'Android' });
    await android.getByLabel('App link URL').fill('shop://sale');
    // No package name yet: the API refuses, and says so next to the field.
    await page.getByRole('button', { name: 'Create link', exact: true }).click();
    const packageName = android.getByLabel('Package name');
    await expect.poll(() => packageName.getAttribute('aria-invalid')).toBe('true');
    const describedBy = (await packageName.getAttribute('aria-describedby'))!;
    expect(await page.locator(`[id="${describedBy.split(' ').pop()}"]`).textContent()).toMatch(/\S/);
    await shot(page, width, 'link-form-error');

    await packageName.fill('com.example.shop');
    await android.getByLabel('Minimum version').fill('2.1.0');
    await android.getByLabel('Fallback URL').fill('https://example.com/android');
    const ios = page.getByRole('group', { name: 'iOS' });
    await ios.getByLabel('App link URL').fill('shop://sale');
    await ios.getByLabel('Bundle ID').fill('com.example.shop');
    await ios.getByLabel('Minimum version').fill('3.0');
    await ios.getByLabel('Fallback URL').fill('https://example.com/ios');
    await page.getByLabel('Desktop URL').fill('https://example.com/desktop');
    await page.getByLabel('Expiration date').fill('2030-12-31T23:59');
    await page.getByLabel('UTM source').fill('newsletter');
    await page.getByLabel('UTM campaign').fill('spring');
    await page.getByLabel('Tags').fill('spring, email');
    await page.getByLabel('After expiry, send visitors to').fill('https://example.com/over');
    await page.getByLabel('Preview title').fill('Half price this spring');
    await page.getByRole('button', { name: 'Create link', exact: true }).click();

    await expect.poll(() => page.getByRole('heading', { name: 'Spring sale' }).isVisible()).toBe(true);
    shortUrl = (await page.getByTestId('short-url').textContent())!;
    expect(shortUrl).toMatch(new RegExp(`^${stack.shortUrlBase}/[0-9A-Za-z]{7}$`));
    expect(await page.locator('.destinations').textContent()).toContain('com.example.shop');
    expect(await page.getByText('Shared, it shows').textContent()).toContain('Half price this spring');
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.apiUrl });
    await page.getByRole('button', { name: `Copy: ${shortUrl}` }).click();
    await expect.poll(() => page.getByRole('button', { name: `Copied: ${shortUrl}` }).isVisible()).toBe(true);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(shortUrl);
  });

  it("counts visits from Android, iPhone and desktop on the link page, by the tables' numbers", async () => {
    const visit = (userAgent: string, address: string) =>
      fetch(shortUrl, { redirect: 'manual', headers: { 'user-agent': userAgent, 'x-forwarded-for': address } });
    const androidVisit = await visit(UA.androidChrome, ADDRESSES.US);
    expect(androidVisit.status).toBe(302);
    expect(androidVisit.headers.get('location')).toMatch(/^intent:\/\/sale#Intent;scheme=shop;package=com\.example\.shop;/);
    const iphoneVisit = await visit(UA.iphoneSafari, ADDRESSES.GB);
    expect(iphoneVisit.status).toBe(200);
    expect(await iphoneVisit.text()).toContain('shop://sale');
    const desktopVisit = await visit(UA.windowsChrome, ADDRESSES.JP);
    expect(desktopVisit.status).toBe(302);
    expect(desktopVisit.headers.get('location')).toMatch(/^https:\/\/example\.com\/desktop\?/);

    await page.getByLabel('24 h').check();
    await showTable(page, 'Platforms');
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Refresh' }).click();
          await page.waitForTimeout(300);
          return tableOf(page, 'Platforms');
        },
        { timeout: 20_000, interval: 500 },
      )
      .toEqual({ Android: 1, iOS: 1, Desktop: 1 });
    await showTable(page, 'Countries');
    expect(await tableOf(page, 'Countries')).toEqual({ 'Japan (JP)': 1, 'United Kingdom (GB)': 1, 'United States (US)': 1 });
    await showTable(page, 'Operating systems');
    expect(await tableOf(page, 'Operating systems')).toEqual({ Android: 1, iOS: 1, Windows: 1 });
    // Every breakdown of the report, in the registry's order.
    expect(await page.locator('.breakdowns h2').allTextContents()).toEqual([
      'Platforms',
      'Countries',
      'Browsers',
      'Operating systems',
      'Devices',
      'Referrers',
    ]);
    await expect.poll(() => page.locator('.total-value').first().textContent()).toBe('3');
    expect(await page.locator('.total', { hasText: 'Unique clicks' }).locator('.total-value').textContent()).toBe('3');
    await showTable(page, 'Clicks over time');
    const hourly = await tableOf(page, 'Clicks over time');
    expect(Object.keys(hourly)).toHaveLength(24);
    expect(Object.values(hourly).reduce((sum, clicks) => sum + clicks, 0)).toBe(3);
    await shot(page, width, 'link-page-tables');

    // Another bucket: the same clicks, by day, over the last 7 days.
    await page.getByLabel('7 d').check();
    await page.getByLabel('Bucket').selectOption('day');
    const seriesHead = page.getByRole('region', { name: 'Clicks over time' }).locator('thead');
    await expect.poll(() => seriesHead.textContent()).toContain('Day (Europe/Paris)');
    const daily = await tableOf(page, 'Clicks over time');
    expect(Object.keys(daily).length).toBeLessThanOrEqual(8);
    expect(Object.values(daily).reduce((sum, clicks) => sum + clicks, 0)).toBe(3);
    // The browser's zone by default; another zone moves the day boundaries, not the clicks.
    expect(await page.getByLabel('Time zone').inputValue()).toBe('Europe/Paris');
    await page.getByLabel('Time zone').selectOption('Asia/Tokyo');
    await expect.poll(() => seriesHead.textContent()).toContain('Day (Asia/Tokyo)');
    expect(Object.values(await tableOf(page, 'Clicks over time')).reduce((sum, clicks) => sum + clicks, 0)).toBe(3);
    expect(
      await page
        .getByLabel('Time zone')
        .evaluate((select: HTMLSelectElement) => Array.from(select.options).some((option) => option.value === 'Asia/Kolkata')),
    ).toBe(false);
    // A custom range: the last 30 days by default, whole days in the chosen zone.
    await page.getByLabel('Time zone').selectOption('Europe/Paris');
    await page.getByLabel('Custom').check();
    await expect.poll(() => page.getByRole('region', { name: 'Clicks over time' }).locator('tbody tr').count()).toBe(30);
    expect(await seriesHead.textContent()).toContain('Day (Europe/Paris)');
    expect(Object.values(await tableOf(page, 'Clicks over time')).reduce((sum, clicks) => sum + clicks, 0)).toBe(3);
    expect(await page.getByLabel('From').inputValue()).toMatch(/^\d{4}-\d\d-\d\d$/);
    await page.getByRole('region', { name: 'Clicks over time' }).getByRole('button', { name: 'Show as chart' }).click();
    await shot(page, width, 'link-page');
  });

  it('downloads the CSV export and the QR code, which decodes to the short URL', async () => {
    const [csvDownload] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    const csv = readFileSync((await csvDownload.path())!, 'utf8')
      .trimEnd()
      .split(/\r?\n/);
    // Wide: a row per bucket of the view, with its clicks, unique clicks and a column per platform.
    const header = csv[0]!.split(',');
    expect(header.slice(0, 6)).toEqual(['link_id', 'title', 'short_url', 'bucket_start', 'clicks', 'unique_clicks']);
    const rows = csv.slice(1).map((line) => line.split(','));
    const sum = (column: string) => rows.reduce((total, row) => total + Number(row[header.indexOf(column)]), 0);
    expect([sum('clicks'), sum('unique_clicks'), sum('android'), sum('ios'), sum('desktop')]).toEqual([3, 3, 1, 1, 1]);
    expect(csvDownload.suggestedFilename()).toMatch(/\.csv$/);
    const [jsonDownload] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export JSON' }).click()]);
    const json = JSON.parse(readFileSync((await jsonDownload.path())!, 'utf8')) as { clicks: number; unique_clicks: number }[];
    expect(json.reduce((total, row) => total + row.clicks, 0)).toBe(3);
    expect(json.reduce((total, row) => total + row.unique_clicks, 0)).toBe(3);

    const [pngDownload] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download PNG' }).click()]);
    const qr = decodeQrPng(readFileSync((await pngDownload.path())!));
    expect(qr.text).toBe(shortUrl);
    expect(
      await page
        .getByRole('img', { name: `QR code for ${shortUrl}` })
        .evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth > 0),
    ).toBe(true);
  });

  it('edits the link, sending only what changed', async () => {
    await page.getByRole('link', { name: 'Edit' }).click();
    await page.getByLabel('Desktop URL').fill('');
    await page.getByRole('group', { name: 'Android' }).getByLabel('Minimum version').fill('2.2.0');
    const [put] = await Promise.all([
      page.waitForRequest((request) => request.method() === 'PUT'),
      page.getByRole('button', { name: 'Save changes' }).click(),
    ]);
    expect(put.postDataJSON()).toEqual({ desktopUrl: null, androidLink: { minimumVersion: '2.2.0' } });
    await expect.poll(() => page.locator('.destinations').textContent()).toContain('≥ 2.2.0');
    const destinations = await page.locator('.destinations').textContent();
    expect(destinations).toContain('Desktophttps://example.com/sale');
    expect(destinations).toContain('com.example.shop ≥ 3.0');
  });

  it('draws a year by hour (8,760 points) and prints how long it took after the data arrived', async () => {
    await page.getByLabel('1 y').check();
    await expect.poll(() => page.getByLabel('Bucket').inputValue()).toBe('day');
    await page.getByLabel('Bucket').selectOption('hour');
    // The hourly report's draws only: the daily one may still be drawing when the bucket changes.
    const drawn = () =>
      page.evaluate(() =>
        performance
          .getEntriesByName('report-draw')
          .filter(
            (entry) => (entry as PerformanceMeasure).detail?.bucket === 'hour' && (entry as PerformanceMeasure).detail?.points === 8760,
          )
          .map((entry) => entry.duration),
      );
    await expect.poll(async () => (await drawn()).length, { timeout: 20_000 }).toBeGreaterThanOrEqual(1);
    const ms = (await drawn()).at(-1)!;
    await showTable(page, 'Clicks over time');
    // Rows, not labels: in Europe/Paris the hour the clocks go back reads twice.
    expect(await page.getByRole('region', { name: 'Clicks over time' }).locator('tbody tr').count()).toBe(8760);
    await page.getByRole('region', { name: 'Clicks over time' }).getByRole('button', { name: 'Show as chart' }).click();
    console.log(`[browser ${width} px] a one-year hourly report (8,760 points) drew ${ms.toFixed(0)} ms after its data arrived`);
    // The clicks' chart and the app funnel's.
    expect(await page.locator('.time-chart canvas').count()).toBe(2);
  });

  it('shows a link’s app funnel per platform with the numbers the API gives, re-opens apart, and installs and opens on the overview', async () => {
    const token = await page.evaluate(() => JSON.parse(sessionStorage.getItem('deeplink.session')!).token as string);
    const client = createClient({ baseUrl: `${stack.apiUrl}/api`, token });
    // Android without a fallback URL: a visitor without the app is sent on to the Play Store, a store redirect.
    const link = await client.links.create({
      title: 'App funnel',
      defaultUrl: 'https://example.com/app',
      androidLink: { url: 'shop://funnel', appPackageName: 'com.acme.funnel' },
    });
    // Deleted at the end, whatever happens, so the tests after this one see the account as before.
    try {
      const app = await client.apps.create({
        platform: 'android',
        name: 'Acme Funnel',
        packageName: 'com.acme.funnel',
        sha256CertFingerprints: [Array(32).fill('AB').join(':')],
      });
      for (const [userAgent, address] of [
        [UA.androidChrome, ADDRESSES.US],
        [UA.androidChrome, ADDRESSES.GB],
        [UA.windowsChrome, ADDRESSES.JP],
      ] as const) {
        const visit = await fetch(link.url, { redirect: 'manual', headers: { 'user-agent': userAgent, 'x-forwarded-for': address } });
        expect(visit.status).toBe(302);
      }
      const open = (firstLaunch: boolean) =>
        fetch(`${stack.apiUrl}/api/app/open`, {
          method: 'POST',
          headers: { 'x-app-key': app.key, 'content-type': 'application/json' },
          body: JSON.stringify({ url: link.url, openId: crypto.randomUUID(), firstLaunch }),
        }).then((response) => response.status);
      expect([await open(true), await open(false), await open(false)]).toEqual([200, 200, 200]);
      // Once the worker has rolled it all up, the API's numbers are the ones the page must show.
      const reportOf = () => client.analytics.link(link.id);
      await expect
        .poll(
          async () => {
            const { counts } = (await reportOf()).appEvents;
            return [
              counts.CLICK.ANDROID + counts.CLICK.DESKTOP,
              counts.REDIRECT.ANDROID,
              counts.APP_FIRST_OPEN.ANDROID,
              counts.APP_RE_OPEN.ANDROID,
            ];
          },
          { timeout: 20_000, interval: 1000 },
        )
        .toEqual([3, 2, 1, 2]);
      const { appEvents } = await reportOf();

      await page.goto(`${stack.apiUrl}/links/${link.id}`);
      const funnel = page.getByRole('region', { name: 'App funnel', exact: true });
      await expect.poll(() => funnel.locator('tbody tr').count(), { timeout: 10_000 }).toBe(4);
      expect(await funnel.locator('thead th').allTextContents()).toEqual(['Step', 'Android', 'iOS', 'Desktop', 'Other', 'All platforms']);
      const shown = await funnel
        .locator('tbody tr')
        .evaluateAll((rows) =>
          rows.map((row) => [
            row.getAttribute('data-step')!,
            Array.from(row.querySelectorAll('.funnel-count'), (cell) => Number(cell.textContent!.replace(/,/g, ''))),
            Array.from(row.querySelectorAll('.funnel-rate'), (cell) => cell.textContent!),
          ]),
        );
      const perPlatform = (step: keyof typeof appEvents.counts) => {
        const { ANDROID, IOS, DESKTOP, OTHER } = appEvents.counts[step];
        return [ANDROID, IOS, DESKTOP, OTHER, ANDROID + IOS + DESKTOP + OTHER];
      };
      expect(shown.map(([step, counts]) => [step, counts])).toEqual(
        (['CLICK', 'REDIRECT', 'APP_INSTALL', 'APP_FIRST_OPEN'] as const).map((step) => [step, perPlatform(step)]),
      );
      expect(shown.map(([step, counts]) => [step, counts])).toEqual([
        ['CLICK', [2, 0, 1, 0, 3]],
        ['REDIRECT', [2, 0, 0, 0, 2]],
        ['APP_INSTALL', [0, 0, 0, 0, 0]],
        ['APP_FIRST_OPEN', [1, 0, 0, 0, 1]],
      ]);
      // Each step's share of the one above, per platform (Android: 2 of 2 clicks redirected) and the API's rate for all.
      const percent = (rate: number | null) =>
        rate === null ? '—' : new Intl.NumberFormat('en', { style: 'percent', maximumFractionDigits: 1 }).format(rate);
      expect(shown.map(([, , rates]) => rates)).toEqual([
        [],
        ['100%', '—', '0%', '—', percent(appEvents.conversion.redirectPerClick)],
        ['0%', '—', '—', '—', percent(appEvents.conversion.installPerRedirect)],
        ['—', '—', '—', '—', percent(appEvents.conversion.firstOpenPerInstall)],
      ]);
      expect(percent(appEvents.conversion.redirectPerClick)).toBe('66.7%');
      expect(await funnel.locator('caption').textContent()).toContain(
        `first opens per click: ${percent(appEvents.conversion.firstOpenPerClick)}`,
      );
      expect(await page.getByTestId('re-opens').textContent()).toBe(
        'Re-opens, not part of the funnel: 2 (Android 2, iOS 0, Desktop 0, Other 0)',
      );
      // Over time: the chart, and as a table each step's buckets add up to the funnel's totals.
      expect(await page.getByRole('region', { name: 'App funnel over time' }).locator('.time-chart canvas').count()).toBe(1);
      await showTable(page, 'App funnel over time');
      const overTime = page.getByRole('region', { name: 'App funnel over time' });
      expect(await overTime.locator('thead th').allTextContents()).toEqual([
        'Day (Europe/Paris)',
        'Clicks',
        'Store redirects',
        'Installs',
        'First opens',
        'Re-opens',
      ]);
      const columns = await overTime
        .locator('tbody tr')
        .evaluateAll((rows) => rows.map((row) => Array.from(row.querySelectorAll('td'), (cell) => Number(cell.textContent))));
      // The 30 d preset: the last 30 days to the current hour, so 30 or 31 local days.
      expect(columns.length).toBeGreaterThanOrEqual(30);
      expect([0, 1, 2, 3, 4].map((column) => columns.reduce((sum, row) => sum + row[column]!, 0))).toEqual([3, 2, 0, 1, 2]);
      await shot(page, width, 'link-page-funnel');

      // The overview: installs and opens of the last 30 days, from the summary the API gives.
      await page.getByRole('link', { name: 'Overview' }).click();
      const card = (label: string) => page.locator('.total', { hasText: label }).locator('.total-value');
      await expect.poll(() => card('First opens, last 30 days').textContent(), { timeout: 10_000 }).toBe('1');
      const summary = await client.analytics.summary({ breakdowns: 'true' });
      const all = (counts: Record<string, number>) => String(Object.values(counts).reduce((sum, count) => sum + count, 0));
      expect(await card('Installs, last 30 days').textContent()).toBe(all(summary.appEvents!.counts.APP_INSTALL));
      expect(await card('First opens, last 30 days').textContent()).toBe(all(summary.appEvents!.counts.APP_FIRST_OPEN));
      expect(await card('Re-opens, last 30 days').textContent()).toBe(all(summary.appEvents!.counts.APP_RE_OPEN));
      expect(await card('Re-opens, last 30 days').textContent()).toBe('2');
    } finally {
      await client.links.delete(link.id);
    }
  });

  it('creates an API key shown once, which works until it is revoked', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Key name').fill('CRM sync');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.getByTestId('new-key').textContent())!;
    expect(key).toMatch(/^dlk_/);
    expect(await page.getByText('shown only this once').isVisible()).toBe(true);
    await shot(page, width, 'api-keys');
    const me = () =>
      fetch(`${stack.apiUrl}/api/auth/me`, { headers: { authorization: `Bearer ${key}` } }).then((response) => response.status);
    expect(await me()).toBe(200);
    await page.getByRole('button', { name: 'Revoke CRM sync' }).click();
    await expect.poll(() => page.getByText('No API keys yet').isVisible()).toBe(true);
    expect(await me()).toBe(401);
  });

  it("shows each app's key prefix and rotates its key, showing the new key once", async () => {
    const token = await page.evaluate(() => JSON.parse(sessionStorage.getItem('deeplink.session')!).token as string);
    const client = createClient({ baseUrl: `${stack.apiUrl}/api`, token });
    const app = await client.apps.create({ platform: 'ios', name: 'Acme Shop', teamId: 'ABCDE12345', bundleId: `com.acme.shop${width}` });
    const open = (key: string) =>
      fetch(`${stack.apiUrl}/api/app/open`, {
        method: 'POST',
        headers: { 'x-app-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ url: shortUrl }),
      }).then((response) => response.status);
    expect(await open(app.key)).toBe(200);

    await page.getByRole('link', { name: 'Apps' }).click();
    const row = page.getByRole('row', { name: /Acme Shop/ });
    await expect.poll(() => row.isVisible()).toBe(true);
    expect(await row.getByTestId('key-prefix').textContent()).toBe(`${app.keyPrefix}…`);
    expect(await page.content()).not.toContain(app.key);
    await page.getByRole('button', { name: 'Rotate key of Acme Shop' }).click();
    const key = (await page.getByTestId('new-app-key').textContent())!;
    expect(key).toMatch(/^dla_/);
    expect(key).not.toBe(app.key);
    expect(await page.getByText('shown only this once').isVisible()).toBe(true);
    await expect.poll(() => row.getByTestId('key-prefix').textContent()).toBe(`${key.slice(0, 12)}…`);
    await shot(page, width, 'apps');
    expect(await open(app.key)).toBe(401);
    expect(await open(key)).toBe(200);
    await page.getByRole('button', { name: 'I have saved it' }).click();
    expect(await page.getByTestId('new-app-key').count()).toBe(0);

    // The probabilistic install match: off until turned on here (after a confirmation), then its window.
    const setting = async () => (await client.apps.list()).find((each) => each.id === app.id);
    const matching = page.getByRole('checkbox', { name: 'Fingerprint match for Acme Shop' });
    expect(await matching.isChecked()).toBe(false);
    await matching.click();
    await expect.poll(async () => (await setting())?.fingerprintMatching).toBe(true);
    await page.getByRole('combobox', { name: 'Fingerprint match window for Acme Shop' }).selectOption('60');
    await expect.poll(async () => (await setting())?.fingerprintWindowMinutes).toBe(60);
  });

  it('lists the link with its clicks and tags, pages, searches, filters by tag, and deletes the selected links', async () => {
    await page.getByRole('link', { name: 'Links', exact: true }).click();
    const row = page.getByRole('row', { name: /Spring sale/ });
    await expect.poll(() => row.isVisible()).toBe(true);
    expect(await row.locator('td.num').textContent()).toBe('3');
    expect(await row.locator('.tag').allTextContents()).toEqual(['spring', 'email']);
    await page.getByRole('button', { name: 'Title' }).click();
    expect(page.url()).toContain('sort=title');
    await shot(page, width, 'links');

    // 21 more links (one bulk request with the page's own token): two pages, a search and a tag filter.
    const token = await page.evaluate(() => JSON.parse(sessionStorage.getItem('deeplink.session')!).token as string);
    const client = createClient({ baseUrl: `${stack.apiUrl}/api`, token });
    const autumn = await client.links.createMany(
      Array.from({ length: 21 }, (_, index) => ({
        title: `Autumn ${String(index + 1).padStart(2, '0')}`,
        defaultUrl: `https://example.com/autumn/${index + 1}`,
        tags: index % 2 === 0 ? ['autumn'] : [],
      })),
    );
    expect(autumn).toHaveLength(21);
    await page.reload();
    await expect.poll(() => page.getByText('Page 1 of 2').isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Next' }).click();
    await expect.poll(() => page.getByText('Page 2 of 2').isVisible()).toBe(true);
    expect(await page.locator('table.links tbody tr').count()).toBe(2);
    await page.getByLabel('Search', { exact: true }).fill('spring');
    await page.getByLabel('Search', { exact: true }).press('Enter');
    await expect.poll(() => page.locator('table.links tbody tr').count()).toBe(1);
    expect(page.url()).toContain('q=spring');
    await page.getByLabel('Search', { exact: true }).fill('');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByLabel('Only links tagged').selectOption('autumn');
    await expect.poll(() => page.locator('table.links tbody tr').count()).toBe(11);
    expect(page.url()).toContain('tag=autumn');
    // A second tag narrows further (every tag must match): no link carries both.
    await page.getByLabel('Only links tagged').selectOption('spring');
    await expect.poll(() => page.getByText('No link matches.').isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Remove the tag filter spring' }).click();
    await expect.poll(() => page.locator('table.links tbody tr').count()).toBe(11);
    await page.getByRole('button', { name: 'Remove the tag filter autumn' }).click();
    await expect.poll(() => page.locator('table.links tbody tr').count()).toBe(20);
    // Most clicked first: the clicks header, twice (ascending, then descending).
    await page.getByRole('button', { name: 'Clicks' }).click();
    await expect.poll(() => page.url()).toContain('sort=clicks');
    await page.getByRole('button', { name: /^Clicks/ }).click();
    await expect.poll(() => page.locator('table.links tbody tr').first().textContent()).toContain('Spring sale');
    // Back to the default order (newest first): the list without parameters.
    await page.getByRole('link', { name: 'Links', exact: true }).click();
    await expect.poll(() => page.url()).not.toContain('sort=');
    await page.getByRole('link', { name: 'Overview' }).click();
    await expect.poll(() => page.getByText('Total links').isVisible()).toBe(true);
    await showTable(page, 'Top links');
    expect(await tableOf(page, 'Top links')).toEqual({ 'Spring sale': 3 });
    await showTable(page, 'Clicks, last 30 days');
    const days = await tableOf(page, 'Clicks, last 30 days');
    expect(Object.keys(days)).toHaveLength(30);
    expect(Object.values(days).reduce((sum, clicks) => sum + clicks, 0)).toBe(3);
    expect(await page.locator('.total', { hasText: 'Clicks, last 30 days' }).locator('.total-value').textContent()).toBe('3');
    await shot(page, width, 'overview');
    // Dark mode follows the system setting.
    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe('rgb(17, 20, 24)');
    await shot(page, width, 'overview-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe('rgb(246, 247, 249)');
    await page.getByRole('link', { name: 'Links', exact: true }).click();
    // Newest first: the first link made is on the second page, with one of the autumn ones.
    await page.getByRole('button', { name: 'Next' }).click();
    await expect.poll(() => page.getByLabel('Select Spring sale').isVisible()).toBe(true);
    for (const box of await page.locator('table.links tbody input[type="checkbox"]').all()) await box.check();
    await page.getByRole('button', { name: 'Delete selected (2)' }).click();
    // The second page is gone: the list shows the last page there is.
    await expect.poll(() => page.locator('table.links caption').textContent()).toContain('20 in all');
    expect(page.url()).not.toContain('page=2');
    expect(await page.getByText('Spring sale').count()).toBe(0);
  });
});
