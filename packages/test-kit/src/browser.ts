import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { aptInstall } from '../../../scripts/services.mjs';
import { axeViolations } from './axe.js';

/** Debian's Chromium: the browser tests drive it, and never download one of their own. */
export const CHROMIUM = '/usr/bin/chromium';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Installs Debian's chromium package when it is missing (as root), or throws with the command to run. */
export function ensureChromium(): void {
  if (existsSync(CHROMIUM)) return;
  aptInstall(['chromium'], `${CHROMIUM} is missing (the browser tests drive Debian's Chromium)`);
  if (!existsSync(CHROMIUM)) throw new Error(`the chromium package was installed but ${CHROMIUM} is still missing`);
}

/**
 * Chromium on a fresh user-data directory (removed on close), downloads allowed, in Europe/Paris time.
 * `hosts` maps hostnames to the addresses Chromium reaches them at (a custom short-link domain on
 * 127.0.0.1), without DNS.
 */
export async function launchChromium({
  hosts = {},
  timezoneId = 'Europe/Paris',
}: {
  hosts?: Record<string, string>;
  timezoneId?: string;
} = {}): Promise<{
  context: BrowserContext;
  close(): Promise<void>;
}> {
  ensureChromium();
  const profile = mkdtempSync(join(tmpdir(), 'deeplink-chromium-'));
  const rules = Object.entries(hosts).map(([hostname, address]) => `MAP ${hostname} ${address}`);
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: rules.length === 0 ? FLAGS : [...FLAGS, `--host-resolver-rules=${rules.join(',')}`],
    acceptDownloads: true,
    viewport: { width: 1280, height: 900 },
    // By default a zone other than the machine's (UTC), so "the browser's time zone" is visibly the browser's.
    timezoneId,
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * A new page `width` pixels wide (a phone's height below 600), collecting in `problems` every
 * script error and every Content-Security-Policy refusal, for the test to assert there are none.
 * Dialogs are accepted; a step that cannot happen fails in 10 s with what it waited for, rather
 * than at the test's timeout.
 */
export async function openPage(
  context: BrowserContext,
  width: number,
  { userAgent }: { userAgent?: string } = {},
): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  await page.setViewportSize({ width, height: width < 600 ? 780 : 900 });
  if (userAgent) await page.setExtraHTTPHeaders({ 'user-agent': userAgent });
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy|Refused to/i.test(message.text())) problems.push(message.text());
  });
  page.on('dialog', (dialog) => void dialog.accept());
  return { page, problems };
}

/** Where browser tests put their screenshots (git-ignored). */
export const SCREENSHOTS = join(import.meta.dirname, '../../../.screenshots');

/**
 * The checks every state of a page gets: no axe violation, nothing wider than the page's `width`
 * (wide tables scroll in their own box); then a full-page screenshot, `<width>-<name>.png`.
 */
export async function checkPage(page: Page, width: number, name: string): Promise<void> {
  expect(await axeViolations(page), name).toEqual([]);
  expect(await page.evaluate(() => document.documentElement.scrollWidth), `${name} fits ${width} px`).toBeLessThanOrEqual(width);
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${width}-${name}.png`), fullPage: true });
}
