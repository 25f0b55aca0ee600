import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { aptInstall } from '../../scripts/services.mjs';

/** Debian's Chromium: the browser tests drive it, and never download one of their own. */
export const CHROMIUM = '/usr/bin/chromium';

const FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

/** Installs Debian's chromium package when it is missing (as root), or throws with the command to run. */
export function ensureChromium(): void {
  if (existsSync(CHROMIUM)) return;
  aptInstall(['chromium'], `${CHROMIUM} is missing (the browser tests drive Debian's Chromium)`);
  if (!existsSync(CHROMIUM)) throw new Error(`the chromium package was installed but ${CHROMIUM} is still missing`);
}

/** Chromium on a fresh user-data directory (removed on close), downloads allowed, in Europe/Paris time. */
export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  ensureChromium();
  const profile = mkdtempSync(join(tmpdir(), 'deeplink-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    acceptDownloads: true,
    viewport: { width: 1280, height: 900 },
    // A zone other than the machine's (UTC), so "the browser's time zone" is visibly the browser's.
    timezoneId: 'Europe/Paris',
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
