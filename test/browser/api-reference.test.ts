/// <reference lib="dom" />
// The API reference (/api/docs) in Debian's Chromium at a phone's and a laptop's width: every
// operation of the OpenAPI document on one page, under the pages' strict policy, with no
// accessibility violation axe-core can find, and usable from the keyboard.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from '@deeplink/test-kit/axe';
import { launchChromium, openPage } from '@deeplink/test-kit/browser';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { freePort, healthy, startProcess, type RunningProcess } from '@deeplink/test-kit/processes';

const screenshots = join(import.meta.dirname, '../../.screenshots');

let env: TestEnvironment;
let api: RunningProcess;
let apiUrl: string;
let browser: Awaited<ReturnType<typeof launchChromium>>;

beforeAll(async () => {
  env = await createTestEnvironment();
  const [port, metricsPort] = await Promise.all([freePort(), freePort()]);
  apiUrl = `http://127.0.0.1:${port}`;
  api = await startProcess('api', {
    env: { ...env.env, API_PORT: String(port), API_METRICS_PORT: String(metricsPort) },
    ready: healthy(`http://127.0.0.1:${metricsPort}`),
  });
  browser = await launchChromium();
  mkdirSync(screenshots, { recursive: true });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await api?.stop();
  await env?.close();
});

describe.each([1280, 390])('the API reference at %i px', (width) => {
  it('lists every operation of the document, with no axe violation and nothing the policy refused', async () => {
    const openApi = (await (await fetch(`${apiUrl}/api/docs/json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const { page, problems } = await openPage(browser.context, width);
    try {
      const response = await page.goto(`${apiUrl}/api/docs`);
      expect(response?.status()).toBe(200);
      const listed = await page.locator('main article h3').allTextContents();
      const expected = Object.entries(openApi.paths).flatMap(([path, item]) =>
        Object.keys(item)
          .filter((method) => method !== 'parameters')
          .map((method) => `${method.toUpperCase()} ${path}`),
      );
      expect(listed.map((text) => text.replace(/\s+/g, ' ').trim()).sort()).toEqual(expected.sort());
      expect(await axeViolations(page)).toEqual([]);
      await page.emulateMedia({ colorScheme: 'dark' });
      expect(await axeViolations(page)).toEqual([]);
      await page.screenshot({ path: join(screenshots, `api-reference-${width}-dark.png`) });
      await page.emulateMedia({ colorScheme: 'light' });
      // Nothing wider than the screen but the tables, which scroll on their own.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      // The first Tab reaches the skip link, which leads to the operations.
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to the operations');
      await page.keyboard.press('Enter');
      expect(page.url()).toMatch(/#operations$/);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
