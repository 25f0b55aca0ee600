/// <reference lib="dom" />
// The callbacks given to page.evaluate() run in the page: they use the DOM's globals.
// The dashboard's Import page in Chromium against the whole stack: a file chosen and previewed in
// the browser, a check that writes nothing, then the import with its progress and its report.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from '@deeplink/test-kit/axe';
import { launchChromium, openPage } from '@deeplink/test-kit/browser';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { startStack, type Stack } from '@deeplink/test-kit/stack';

const screenshots = join(import.meta.dirname, '../../.screenshots');

let env: TestEnvironment;
let stack: Stack;
let browser: Awaited<ReturnType<typeof launchChromium>>;

beforeAll(async () => {
  env = await createTestEnvironment({ RATE_LIMIT_AUTH_MAX: '1000' });
  stack = await startStack(env.env);
  browser = await launchChromium();
  mkdirSync(screenshots, { recursive: true });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await env?.close();
});

/** A YOURLS export: `count` good rows (keywords page0…), then one keyword too short to be a code. */
const yourlsFile = (count: number) =>
  [
    'keyword,url,title,timestamp,ip,clicks',
    ...Array.from({ length: count }, (_, n) => `page${n},https://example.com/page/${n},Page ${n},2020-01-02 03:04:05,127.0.0.1,0`),
    'ab,https://example.com/short,Too short,2020-01-02 03:04:05,127.0.0.1,0',
  ].join('\n');

/** Starts recording, in the page, every progress bar shown and the values it had. */
const watchProgress = (page: Page) =>
  page.evaluate(() => {
    const seen: { value: number; max: number }[] = [];
    (window as unknown as { progressSeen: typeof seen }).progressSeen = seen;
    new MutationObserver(() => {
      const bar = document.querySelector('progress');
      if (bar) seen.push({ value: bar.value, max: bar.max });
    }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
  });

describe('the Import page', () => {
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    ({ page, problems } = await openPage(browser.context, 1280));
  });
  afterAll(async () => {
    expect(problems).toEqual([]);
    await page.close();
  });

  it('previews a file, checks it without writing, then imports it with progress and a report of the refused rows', {
    timeout: 120_000,
  }, async () => {
    await page.goto(`${stack.apiUrl}/`);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByLabel('Name').fill('Ivy Importer');
    await page.getByLabel('Email').fill(`importer-${Date.now()}@example.com`);
    await page.getByLabel('Password').fill('a long enough password');
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Overview' }).isVisible()).toBe(true);

    await page.getByRole('link', { name: 'Import', exact: true }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Import links' }).isVisible()).toBe(true);
    await page.getByLabel('Format').selectOption('yourls');
    const file = yourlsFile(3000);
    await page.getByLabel(/^CSV file/).setInputFiles({ name: 'yourls.csv', mimeType: 'text/csv', buffer: Buffer.from(file) });
    // The preview: the header and the first rows, parsed in the browser.
    const preview = page.getByTestId('import-preview');
    await expect
      .poll(() => preview.locator('thead th').allTextContents())
      .toEqual(['keyword', 'url', 'title', 'timestamp', 'ip', 'clicks']);
    expect(await preview.locator('tbody tr').count()).toBe(5);
    expect(await preview.locator('tbody tr').first().locator('td').first().textContent()).toBe('page0');

    // The check: the same report a real run gives, nothing written.
    await page.getByRole('button', { name: 'Check without importing' }).click();
    const report = page.getByTestId('import-report');
    await expect.poll(() => report.textContent(), { timeout: 60_000 }).toMatch(/nothing was written/);
    expect(await report.textContent()).toContain('3000 would be created');
    expect(
      await report
        .getByRole('table', { name: /Refused rows/ })
        .locator('tbody tr')
        .allTextContents(),
    ).toEqual([expect.stringMatching(/^3002keyword has a path that cannot be a code \(ab\)/)]);

    // The import, with the keyboard: its progress bar while it runs, then the report.
    await watchProgress(page);
    await page.getByRole('button', { name: 'Import', exact: true }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => report.textContent(), { timeout: 60_000 }).toMatch(/Import finished/);
    expect(await report.textContent()).toContain('3000 created');
    expect(await report.textContent()).toContain('1 refused');
    const progress = await page.evaluate(() => (window as unknown as { progressSeen: { value: number; max: number }[] }).progressSeen);
    expect(progress.length).toBeGreaterThan(0);
    expect(progress[0]!.max).toBe(file.length);

    // At phone width the page still fits: the preview and the report tables scroll inside their own box.
    await page.setViewportSize({ width: 360, height: 800 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    expect(await axeViolations(page), 'import-report').toEqual([]);
    await page.screenshot({ path: join(screenshots, '360-import-report.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 800 });

    await report.getByRole('link', { name: 'See your links' }).click();
    await expect
      .poll(() =>
        page
          .getByText(/^Page \d+$/)
          .first()
          .isVisible(),
      )
      .toBe(true);
  });
});
