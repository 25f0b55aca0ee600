/// <reference lib="dom" />
// What a marketer sets up once, in Debian's Chromium at a phone's and a laptop's width, against the
// whole stack: a custom domain verified against a local DNS server, an app registered, a link with
// a back-half on that domain made through the form, a new password, and signing out everywhere.
// axe-core checks every page and state on the way.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../packages/client/src/index.js';
import { checkPage, launchChromium, openPage } from '@deeplink/test-kit/browser';
import { startDnsServer, type DnsServer } from '@deeplink/test-kit/dns-server';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { decodeQrPng } from '@deeplink/test-kit/qr';
import { startStack, type Stack } from '@deeplink/test-kit/stack';

let dns: DnsServer;
let env: TestEnvironment;
let stack: Stack;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let icons: Server;

beforeAll(async () => {
  dns = await startDnsServer();
  // The app icon's server is on loopback: the API may fetch logos from it.
  icons = createServer((_request, response) => response.end(logoPng([20, 150, 90])));
  await new Promise<void>((resolve) => icons.listen(0, '127.0.0.1', resolve));
  env = await createTestEnvironment({ DNS_SERVERS: dns.address, RATE_LIMIT_AUTH_MAX: '1000', QR_LOGO_ALLOW_PRIVATE: '1' });
  stack = await startStack(env.env);
  browser = await launchChromium();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await env?.close();
  await dns?.close();
  icons?.closeAllConnections();
  icons?.close();
});

/** A 64 px square PNG logo in one colour. */
function logoPng(rgb: [number, number, number]): Buffer {
  const png = new PNG({ width: 64, height: 64 });
  for (let i = 0; i < png.data.length; i += 4) png.data.set([...rgb, 255], i);
  return PNG.sync.write(png);
}

describe.each([1280, 390])('setting up at %i px', (width) => {
  let page: Page;
  let problems: string[];
  const email = `setup-${width}-${Date.now()}@example.com`;
  const hostname = `go-${width}.setup.test`;
  const password = 'a long enough password';

  beforeAll(async () => {
    await createClient({ baseUrl: `${stack.apiUrl}/api` }).auth.register({ name: 'Sam Setup', email, password });
    ({ page, problems } = await openPage(browser.context, width));
    await page.goto(`${stack.apiUrl}/`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
  });
  afterAll(async () => {
    expect(problems).toEqual([]);
    await page.close();
  });

  it('adds a domain, shows the TXT record to publish, and verifies it once DNS has it', async () => {
    await page.getByRole('link', { name: 'Domains', exact: true }).click();
    await expect.poll(() => page.getByText('No domains yet').isVisible()).toBe(true);
    await checkPage(page, width, 'domains-empty');
    // A typo first: the API's message under the field, which has the focus.
    await page.getByLabel('Domain', { exact: true }).fill('not a host');
    await page.getByRole('button', { name: 'Add domain' }).click();
    await expect.poll(() => page.getByLabel('Domain', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await checkPage(page, width, 'domains-error');

    await page.getByLabel('Domain', { exact: true }).fill(hostname);
    await page.getByRole('button', { name: 'Add domain' }).click();
    const card = page.getByRole('region', { name: hostname });
    await expect.poll(() => card.getByText('Pending').first().isVisible()).toBe(true);
    const [, name, value] = await card.locator('.record dd code').allTextContents();
    expect(name).toBe(`_deeplink-challenge.${hostname}`);
    await checkPage(page, width, 'domains-pending');

    dns.records.set(name!, [value!]);
    await card.getByRole('button', { name: 'Verify now' }).click();
    await expect.poll(() => card.getByText('Active: links can use it').isVisible()).toBe(true);
    await checkPage(page, width, 'domains-active');
  });

  it('registers an iOS app and shows its key once, with what it puts in the association files', async () => {
    await page.getByRole('link', { name: 'Apps', exact: true }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Add an app' }).isVisible()).toBe(true);
    await page.getByLabel('Team ID').fill('ABCDE12345');
    await page.getByLabel('Bundle ID').fill(`com.example.setup${width}`);
    await page.getByRole('button', { name: 'Add app' }).click();
    await expect.poll(() => page.getByTestId('new-app-key').textContent()).toMatch(/^dla_/);
    expect(await page.locator('tbody').textContent()).toContain(`ABCDE12345.com.example.setup${width}`);
    await checkPage(page, width, 'apps-added');
  });

  it('makes a link with a back-half on the domain, checked as it is typed, from an address typed without https://', async () => {
    await page.getByRole('link', { name: 'Links', exact: true }).click();
    await page.goto(`${stack.apiUrl}/links/new`);
    await page.getByLabel('Domain').selectOption(hostname);
    await page.getByLabel('Back-half').fill(`spring-${width}`);
    await expect
      .poll(() => page.locator('#field-slug-status').textContent())
      .toBe(`Free. The short link: http://${hostname}/spring-${width}`);
    await page.getByLabel(/^Title/).fill('Spring on our domain');
    await page.getByLabel('Default URL').fill('example.com/spring');
    await page.getByLabel('UTM campaign').fill('spring');
    // The UTM value is shown once: in its field, not again as a parameter row.
    expect(await page.locator('table.parameters tbody tr').count()).toBe(0);
    await checkPage(page, width, 'link-form-place');
    await page.getByRole('button', { name: 'Create link', exact: true }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Spring on our domain' }).isVisible()).toBe(true);
    expect(await page.getByTestId('short-url').textContent()).toBe(`http://${hostname}/spring-${width}`);
    expect(await page.locator('.destinations').textContent()).toContain('https://example.com/spring');

    // The QR code in the brand's colour with a logo, a narrow quiet zone and a chosen size: the
    // download still decodes to the short URL.
    await page.getByText('Colours, logo and size').click();
    await page.getByLabel('Quiet zone').selectOption('1');
    await page.getByLabel('Download size').selectOption('512');
    await page.getByLabel('Code colour').fill('#1b3a6b');
    await page
      .getByLabel('Logo in the centre (PNG)')
      .setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: logoPng([200, 30, 40]) });
    await checkPage(page, width, 'link-page-qr-style');
    const [qr] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download PNG' }).click()]);
    const png = readFileSync((await qr.path())!);
    expect(decodeQrPng(png).text).toBe(`http://${hostname}/spring-${width}`);
    expect(qr.suggestedFilename()).toBe(`qr-spring-${width}-512.png`);
    const image = PNG.sync.read(png);
    expect([image.width, image.height]).toEqual([512, 512]);
    const at = (x: number, y: number) => [...image.data.subarray((y * image.width + x) * 4, (y * image.width + x) * 4 + 3)];
    expect(at(image.width / 2, image.height / 2)).toEqual([200, 30, 40]);
    // One module of quiet zone: the finder pattern's corner starts within 5 % of the edge (the
    // standard 4 modules would put it past 8 %).
    let corner = 0;
    while (at(corner, corner).join(',') !== '27,58,107') corner++;
    expect(corner / image.width).toBeLessThan(0.05);
    const colours = new Set<string>();
    for (let i = 0; i < image.data.length; i += 4) colours.add(image.data.subarray(i, i + 3).join(','));
    expect(colours.has('27,58,107')).toBe(true);

    // The app's icon by its address instead: fetched by the API, drawn in the centre.
    const iconUrl = `http://127.0.0.1:${(icons.address() as AddressInfo).port}/icon.png`;
    await page.getByLabel("Or the logo's address (your app's icon, say)").fill(iconUrl);
    await page.getByLabel("Or the logo's address (your app's icon, say)").press('Enter');
    const [withIcon] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download PNG' }).click()]);
    const iconPng = readFileSync((await withIcon.path())!);
    expect(decodeQrPng(iconPng).text).toBe(`http://${hostname}/spring-${width}`);
    const iconImage = PNG.sync.read(iconPng);
    const centre = (iconImage.height / 2) * iconImage.width + iconImage.width / 2;
    expect([...iconImage.data.subarray(centre * 4, centre * 4 + 3)]).toEqual([20, 150, 90]);

    // The same back-half again is taken, and said so before anything is sent.
    await page.goto(`${stack.apiUrl}/links/new`);
    await page.getByLabel('Domain').selectOption(hostname);
    await page.getByLabel('Back-half').fill(`spring-${width}`);
    await expect.poll(() => page.locator('#field-slug-status').textContent()).toBe('Taken on this domain: pick another back-half.');
    await checkPage(page, width, 'link-form-taken');

    // A link that does not exist (deleted, or a mistyped address): a heading and a way back.
    await page.goto(`${stack.apiUrl}/links/00000000-0000-4000-8000-000000000000`);
    await expect.poll(() => page.getByRole('heading', { name: 'Link not found' }).isVisible()).toBe(true);
    await checkPage(page, width, 'link-not-found');
    await page.getByRole('link', { name: 'Back to your links' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Links', exact: true }).isVisible()).toBe(true);
  });

  it('offers Retry when a report cannot be loaded, and loads it again', async () => {
    const report = (url: URL) => /^\/api\/analytics\/links\/[^/]+$/.test(url.pathname);
    const unavailable = JSON.stringify({
      success: false,
      error: { code: 'SERVICE_UNAVAILABLE', message: 'The analytics are unavailable right now', details: [] },
    });
    await page.route(report, (route) => route.fulfill({ status: 503, contentType: 'application/json', body: unavailable }));
    try {
      await page.goto(`${stack.apiUrl}/links`);
      await page.getByRole('link', { name: 'Spring on our domain' }).click();
      await expect.poll(() => page.getByText('The analytics are unavailable right now').isVisible()).toBe(true);
      await checkPage(page, width, 'link-page-report-failed');
    } finally {
      await page.unroute(report);
    }
    await page.getByRole('button', { name: 'Retry' }).click();
    await expect.poll(() => page.getByText('The analytics are unavailable right now').count()).toBe(0);
    await expect.poll(() => page.getByText('Total clicks').isVisible()).toBe(true);
  });

  it('shows skeletons while lists load, a busy sign while a range loads, and Retry when a list fails', async () => {
    const list = (url: URL) => url.pathname === '/api/links';
    // The first load of the list is held: the skeleton shows where the rows will be.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route(list, async (route) => {
      await held;
      await route.continue();
    });
    try {
      await page.getByRole('link', { name: 'Links', exact: true }).click();
      const skeleton = page.getByRole('status').filter({ hasText: 'Loading your links…' });
      await expect.poll(() => skeleton.isVisible()).toBe(true);
      await checkPage(page, width, 'links-loading');
      release();
      await expect.poll(() => page.getByRole('link', { name: 'Spring on our domain' }).isVisible()).toBe(true);
      expect(await skeleton.count()).toBe(0);
    } finally {
      await page.unroute(list);
    }

    // A list that cannot be loaded says why and offers Retry, which loads it.
    const unavailable = JSON.stringify({
      success: false,
      error: { code: 'SERVICE_UNAVAILABLE', message: 'The links are unavailable right now', details: [] },
    });
    await page.route(list, (route) => route.fulfill({ status: 503, contentType: 'application/json', body: unavailable }));
    try {
      await page.getByLabel('Search').fill('Spring');
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await expect.poll(() => page.getByText('The links are unavailable right now').isVisible()).toBe(true);
      await checkPage(page, width, 'links-failed');
    } finally {
      await page.unroute(list);
    }
    await page.getByRole('button', { name: 'Retry' }).click();
    await expect.poll(() => page.getByRole('link', { name: 'Spring on our domain' }).isVisible()).toBe(true);
    expect(await page.getByText('The links are unavailable right now').count()).toBe(0);

    // Another range: the last numbers stay, dimmed, under a busy sign until the new ones arrive.
    await page.getByRole('link', { name: 'Spring on our domain' }).click();
    await expect.poll(() => page.getByText('Total clicks').isVisible()).toBe(true);
    const report = (url: URL) => /^\/api\/analytics\/links\/[^/]+$/.test(url.pathname);
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    await page.route(report, async (route) => {
      await answered;
      await route.continue();
    });
    try {
      await page.getByRole('radio', { name: '7 d' }).check();
      const busy = page.getByRole('status').filter({ hasText: 'Loading…' });
      await expect.poll(() => busy.isVisible()).toBe(true);
      expect(await page.locator('.analytics[aria-busy="true"] .stale').count()).toBe(1);
      await checkPage(page, width, 'link-page-range-loading');
      answer();
      await expect.poll(() => busy.count()).toBe(0);
      expect(await page.locator('.analytics .stale').count()).toBe(0);
    } finally {
      await page.unroute(report);
    }

    // The apps, API keys and domains pages say why their list is missing and offer Retry too.
    const apps = (url: URL) => url.pathname === '/api/apps';
    const appsUnavailable = JSON.stringify({
      success: false,
      error: { code: 'SERVICE_UNAVAILABLE', message: 'The apps are unavailable right now', details: [] },
    });
    await page.route(apps, (route) => route.fulfill({ status: 503, contentType: 'application/json', body: appsUnavailable }));
    try {
      await page.getByRole('link', { name: 'Apps', exact: true }).click();
      await expect.poll(() => page.getByText('The apps are unavailable right now').isVisible()).toBe(true);
      await checkPage(page, width, 'apps-failed');
    } finally {
      await page.unroute(apps);
    }
    await page.getByRole('button', { name: 'Retry' }).click();
    await expect.poll(() => page.getByRole('table').getByText(`com.example.setup${width}`).count()).toBeGreaterThan(0);
    expect(await page.getByText('The apps are unavailable right now').count()).toBe(0);
  });

  it('says why UTC is shown to a browser in a zone off the whole hour', async () => {
    const india = await launchChromium({ timezoneId: 'Asia/Kolkata' });
    try {
      const { page: there, problems: theirs } = await openPage(india.context, width);
      await there.goto(`${stack.apiUrl}/`);
      await there.getByLabel('Email').fill(email);
      await there.getByLabel('Password').fill(password);
      await there.getByRole('button', { name: 'Sign in' }).click();
      await there.getByRole('link', { name: 'Links', exact: true }).click();
      await there.getByRole('link', { name: 'Spring on our domain' }).click();
      const zone = there.getByLabel('Time zone');
      await expect.poll(() => zone.inputValue()).toBe('UTC');
      const note = there.locator(`#${await zone.getAttribute('aria-describedby')}`);
      expect(await note.textContent()).toMatch(/yours \(Asia\/(Kolkata|Calcutta)\) is not, and UTC is shown/);
      await checkPage(there, width, 'link-page-utc-note');
      expect(theirs).toEqual([]);
    } finally {
      await india.close();
    }
  });

  it('changes the password, then signs out everywhere: the old session is refused', async () => {
    await page.getByRole('link', { name: 'Account', exact: true }).click();
    await page.getByLabel('Current password').fill('not my password');
    await page.getByLabel('New password').fill('an even longer password');
    await page.getByRole('button', { name: 'Change password' }).click();
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('current-password');
    await checkPage(page, width, 'account-error');

    await page.getByLabel('Current password').fill(password);
    await page.getByRole('button', { name: 'Change password' }).click();
    await expect.poll(() => page.getByText('Password changed.').isVisible()).toBe(true);
    await checkPage(page, width, 'account-changed');

    const token = await page.evaluate(() => JSON.parse(sessionStorage.getItem('deeplink.session')!).token as string);
    const me = () => fetch(`${stack.apiUrl}/api/auth/me`, { headers: { authorization: `Bearer ${token}` } });
    expect((await me()).status).toBe(200);
    // The confirmation dialog is accepted (openPage accepts dialogs).
    await page.getByRole('button', { name: 'Sign out everywhere' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Sign in' }).isVisible()).toBe(true);
    expect((await me()).status).toBe(401);
  });
});
