/// <reference lib="dom" />
// The iOS page's store button as a visitor uses it, for the browser tests of install attribution:
// a tap copies the short URL with the visit's install token, then the store opens.
import type { BrowserContext, Page } from 'playwright-core';

/** Lets pages of every origin write and read the pasteboard, as Safari does for a tap. */
export const allowPasteboard = (context: BrowserContext): Promise<void> => context.grantPermissions(['clipboard-read', 'clipboard-write']);

/**
 * Taps the store button (named `buttonName`) of the iOS page open in `page`, answers the store's
 * page locally (no network) once the page goes there, and returns what the tap put on the
 * pasteboard: the URL the app's first launch finds there.
 */
export async function tapStoreButton(page: Page, buttonName: string, storeUrl: string): Promise<string> {
  await page.route(`${new URL(storeUrl).origin}/**`, (route) =>
    route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>The store</title>' }),
  );
  // Dispatched to the element rather than clicked at its position: once the page has tried the
  // app's scheme (which nothing here opens), headless Chromium delivers no pointer click to it.
  await page.getByRole('link', { name: buttonName }).dispatchEvent('click');
  await page.waitForURL(storeUrl);
  return page.evaluate(() => navigator.clipboard.readText());
}
