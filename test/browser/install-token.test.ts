/// <reference lib="dom" />
// The iOS page's App Store button in Debian's Chromium, as an iPhone visitor without the app meets
// it: the page tries the app and then stays (no store without a tap); a tap copies the short URL
// with the visit's install token to the pasteboard and opens the App Store. The token is the one
// the redirector queued with the visit's REDIRECT event (real redirector, Redis, BullMQ, PostgreSQL;
// no worker, so the queued event stays to be read).
import type { Queue } from 'bullmq';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ClickJobData, findInstallToken, INSTALL_TOKEN_PARAM } from '@deeplink/core';
import { launchChromium, openPage } from '@deeplink/test-kit/browser';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { UA } from '@deeplink/test-kit/user-agents';
import {
  clickQueue,
  createLink,
  createUser,
  queuedBatches,
  startRedirector,
  type RedirectorProcess,
} from '../../services/redirector/test/support.js';
import { allowPasteboard, tapStoreButton } from './install-token-support.js';

const APP_STORE = 'https://apps.apple.com/app/id1234567890';

let env: TestEnvironment;
let redirector: RedirectorProcess;
let queue: Queue<ClickJobData>;
let browser: Awaited<ReturnType<typeof launchChromium>>;

beforeAll(async () => {
  env = await createTestEnvironment({ CLICK_FLUSH_MS: '20' });
  redirector = await startRedirector({ ...env.env, SHORT_URL_BASE: 'http://go.example.test' });
  queue = clickQueue(env.config.REDIS_URL, env.config.QUEUE_PREFIX);
  browser = await launchChromium();
  await allowPasteboard(browser.context);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await queue?.close();
  await redirector?.stop();
  await env?.close();
});

it('copies the short URL with the queued token on a tap of the App Store button, and never opens the store without one', async () => {
  const userId = await createUser(env.sql);
  await env.sql`
    INSERT INTO apps (user_id, platform, name, team_id, bundle_id, app_store_id)
    VALUES (${userId}, 'ios', 'Acme Shop', 'ABCDE12345', 'com.acme.shop', '1234567890')`;
  const link = await createLink(env.sql, userId, { iosLink: { url: 'acmeshop://product/42', bundleId: 'com.acme.shop' } });
  const { page, problems } = await openPage(browser.context, 390, { userAgent: UA.iphoneSafari });
  await page.setExtraHTTPHeaders({ 'user-agent': UA.iphoneSafari, 'accept-language': 'fr-FR,fr;q=0.9' });
  const pageUrl = `${redirector.url}/${link.code}`;
  // Not until the load: the page's script navigates to the app at once (which the browser cannot open).
  const response = await page.goto(pageUrl, { waitUntil: 'commit' });
  expect(response!.status()).toBe(200);
  const button = page.getByRole('link', { name: 'Get Acme Shop on the App Store' });
  expect(await button.getAttribute('href')).toBe(APP_STORE);

  // Past the delay after which a web fallback would have been opened, the page is still there.
  await page.waitForTimeout(2_500);
  expect(page.url()).toBe(pageUrl);

  const copied = await tapStoreButton(page, 'Get Acme Shop on the App Store', APP_STORE);
  expect(page.url()).toBe(APP_STORE);
  const { origin, pathname, searchParams } = new URL(copied);
  expect(`${origin}${pathname}`).toBe(`http://go.example.test/${link.code}`);
  const token = searchParams.get(INSTALL_TOKEN_PARAM);
  expect(findInstallToken(copied)).toBe(token);

  await expect
    .poll(
      async () => (await queuedBatches(queue)).flatMap(({ batch }) => batch.appEvents ?? []).filter((e) => e.linkId === link.id).length,
      {
        timeout: 5_000,
      },
    )
    .toBe(1);
  const [event] = (await queuedBatches(queue)).flatMap(({ batch }) => batch.appEvents ?? []).filter((e) => e.linkId === link.id);
  expect(event).toMatchObject({ name: 'REDIRECT', platform: 'IOS', install: { token, language: 'fr' } });
  expect(problems).toEqual([]);
  await page.close();
});
