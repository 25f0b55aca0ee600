// Install tokens handed out by the redirector (real Redis, BullMQ and PostgreSQL): every Play Store
// destination on Android carries a fresh token in its `referrer`, the iOS page's App Store button
// carries one in the URL it copies, and the visit's queued REDIRECT event carries the same token
// with the visitor's language. Answers that go nowhere near a store carry none.
import { createHash } from 'node:crypto';
import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppEvent, type ClickJobData, findInstallToken, INSTALL_TOKEN_LENGTH, INSTALL_TOKEN_PARAM, PAGE_CSP } from '@deeplink/core';
import { clickQueue, createLink, queuedBatches, redirectorsWithOwnEnvironment, UA, visit } from './support.js';

const redirectors = redirectorsWithOwnEnvironment();
let started: Awaited<ReturnType<typeof redirectors.start>>;
let queue: Queue<ClickJobData>;
beforeAll(async () => {
  started = await redirectors.start({ CLICK_FLUSH_MS: '20' });
  queue = clickQueue(started.env.config.REDIS_URL, started.env.config.QUEUE_PREFIX);
});
afterAll(async () => {
  await queue?.close();
  await redirectors.stopAll();
});

const TOKEN = new RegExp(`^[A-Za-z0-9_-]{${INSTALL_TOKEN_LENGTH}}$`);

/** The Play Store URL an answer sends a visitor without the app to: the intent's fallback, or the Location itself. */
function playUrlOf(location: string): URL {
  const fallback = /;S\.browser_fallback_url=([^;]*);/.exec(location)?.[1];
  // Inside the intent the fallback is encoded once more, as every intent extra is.
  return new URL(fallback === undefined ? location : decodeURIComponent(fallback));
}

/**
 * The install referrer the app reads after installing from `playUrl`: Play hands over the value of
 * the URL's `referrer` parameter, decoded once.
 */
const installReferrer = (playUrl: URL): string => playUrl.searchParams.get('referrer') ?? '';

/** The app events queued for a link. */
const eventsOf = async (linkId: string): Promise<AppEvent[]> =>
  (await queuedBatches(queue)).flatMap(({ batch }) => (batch.appEvents ?? []).filter((event) => event.linkId === linkId));

/**
 * The REDIRECT events queued for a link once there are `count`, as platform, token and language,
 * in no particular order (the queue's jobs come back in any).
 */
async function redirectEvents(linkId: string, count: number) {
  await expect.poll(async () => (await eventsOf(linkId)).length, { timeout: 5_000 }).toBeGreaterThanOrEqual(count);
  const events = await eventsOf(linkId);
  expect(events.every((event) => event.name === 'REDIRECT')).toBe(true);
  expect(events).toHaveLength(count);
  return events.map(({ platform, install }) => ({ platform, token: install?.token ?? null, language: install?.language ?? null }));
}

/** Waits until a click of the link is queued, then says whether any app event came with it. */
async function queuedWithoutEvents(linkId: string): Promise<AppEvent[]> {
  await expect
    .poll(async () => (await queuedBatches(queue)).some(({ batch }) => batch.clicks.some((click) => click.linkId === linkId)))
    .toBe(true);
  return eventsOf(linkId);
}

describe('Android', () => {
  it('puts a new token into the default Play Store fallback on every visit, with the utm_* parameters, and queues it with the language', async () => {
    const { env, redirector, userId } = started;
    const link = await createLink(env.sql, userId, {
      androidLink: { url: 'shop://sale', appPackageName: 'com.example.shop' },
      customParameters: { utm_source: 'mail', utm_campaign: 'spring sale', ref: 'x' },
    });
    const languages = ['fr-CA,fr;q=0.9,en;q=0.8', 'de', undefined];
    const tokens: string[] = [];
    for (const language of languages) {
      const response = await visit(`${redirector.url}/${link.code}`, {
        'user-agent': UA.androidChrome,
        ...(language !== undefined && { 'accept-language': language }),
      });
      expect(response.status).toBe(302);
      const location = response.headers.get('location')!;
      expect(location).toMatch(/^intent:\/\/sale#Intent;scheme=shop;package=com\.example\.shop;S\.browser_fallback_url=/);
      const play = playUrlOf(location);
      expect(play.origin + play.pathname).toBe('https://play.google.com/store/apps/details');
      expect(play.searchParams.get('id')).toBe('com.example.shop');
      const referrer = new URLSearchParams(installReferrer(play));
      // Play Console's campaign attribution reads the utm_* parameters; others stay out of the referrer.
      expect(referrer.get('utm_source')).toBe('mail');
      expect(referrer.get('utm_campaign')).toBe('spring sale');
      expect(referrer.has('ref')).toBe(false);
      const token = referrer.get(INSTALL_TOKEN_PARAM)!;
      expect(token).toMatch(TOKEN);
      expect(findInstallToken(installReferrer(play))).toBe(token);
      tokens.push(token);
    }
    expect(new Set(tokens).size).toBe(languages.length);

    expect(await redirectEvents(link.id, languages.length)).toEqual(
      expect.arrayContaining([
        { platform: 'ANDROID', token: tokens[0], language: 'fr' },
        { platform: 'ANDROID', token: tokens[1], language: 'de' },
        { platform: 'ANDROID', token: tokens[2], language: null },
      ]),
    );
  });

  it("merges the token into the link's own Play URL and its referrer, whose parameters win over the link's, except dl_token", async () => {
    const { env, redirector, userId } = started;
    const stale = 'A'.repeat(INSTALL_TOKEN_LENGTH);
    const ownReferrer = encodeURIComponent(`utm_source=partner&promo=a b&${INSTALL_TOKEN_PARAM}=${stale}`);
    const link = await createLink(env.sql, userId, {
      androidLink: {
        url: 'shop://sale',
        appPackageName: 'com.example.shop',
        fallbackUrl: `https://play.google.com/store/apps/details?id=com.example.shop&hl=fr&referrer=${ownReferrer}`,
      },
      customParameters: { utm_source: 'mail', utm_medium: 'email' },
    });
    const response = await visit(`${redirector.url}/${link.code}`, { 'user-agent': UA.androidChrome });
    const play = playUrlOf(response.headers.get('location')!);
    expect(play.searchParams.get('hl')).toBe('fr');
    expect(play.searchParams.getAll('referrer')).toHaveLength(1);
    const referrer = new URLSearchParams(installReferrer(play));
    expect(referrer.get('utm_source')).toBe('partner');
    expect(referrer.get('promo')).toBe('a b');
    expect(referrer.get('utm_medium')).toBe('email');
    expect(referrer.getAll(INSTALL_TOKEN_PARAM)).toHaveLength(1);
    const token = referrer.get(INSTALL_TOKEN_PARAM)!;
    expect(token).not.toBe(stale);
    expect(findInstallToken(installReferrer(play))).toBe(token);
    expect(await redirectEvents(link.id, 1)).toEqual([{ platform: 'ANDROID', token, language: null }]);
  });

  it('puts a token into a redirect straight to the Play Store', async () => {
    const { env, redirector, userId } = started;
    const link = await createLink(env.sql, userId, { defaultUrl: 'https://play.google.com/store/apps/details?id=com.example.shop' });
    const response = await visit(`${redirector.url}/${link.code}`, { 'user-agent': UA.androidChrome, 'accept-language': 'es-MX' });
    expect(response.status).toBe(302);
    const play = new URL(response.headers.get('location')!);
    expect(play.searchParams.get('id')).toBe('com.example.shop');
    const token = findInstallToken(installReferrer(play));
    expect(token).toMatch(TOKEN);
    // A desktop visitor gets the same store page without a token: no app install follows on that device.
    const desktop = await visit(`${redirector.url}/${link.code}`, { 'user-agent': UA.windowsChrome });
    expect(desktop.headers.get('location')).toBe('https://play.google.com/store/apps/details?id=com.example.shop');
    expect(await redirectEvents(link.id, 2)).toEqual(
      expect.arrayContaining([
        { platform: 'ANDROID', token, language: 'es' },
        { platform: 'DESKTOP', token: null, language: null },
      ]),
    );
  });

  it('leaves an intent falling back to a web page, and every other answer, without a token', async () => {
    const { env, redirector, userId } = started;
    const link = await createLink(env.sql, userId, {
      androidLink: { url: 'shop://sale', appPackageName: 'com.example.shop', fallbackUrl: 'https://example.com/get-the-app' },
      desktopUrl: 'https://example.com/desktop',
      customParameters: { utm_source: 'mail' },
    });
    const android = await visit(`${redirector.url}/${link.code}`, { 'user-agent': UA.androidChrome });
    expect(android.headers.get('location')).toBe(
      `intent://sale#Intent;scheme=shop;package=com.example.shop;S.browser_fallback_url=${encodeURIComponent('https://example.com/get-the-app?utm_source=mail')};end`,
    );
    const desktop = await visit(`${redirector.url}/${link.code}`, { 'user-agent': UA.windowsChrome });
    expect(desktop.headers.get('location')).toBe('https://example.com/desktop?utm_source=mail');
    const again = await visit(`${redirector.url}/${link.code}`, { 'user-agent': UA.androidChrome });
    expect(again.headers.get('location')).toBe(android.headers.get('location'));
    expect(await queuedWithoutEvents(link.id)).toEqual([]);
  });

  it('answers HEAD with a token in the Location too, and queues no click or token for it', async () => {
    const { env, redirector, userId } = started;
    const link = await createLink(env.sql, userId, { androidLink: { url: 'shop://sale', appPackageName: 'com.example.shop' } });
    const head = await visit(`${redirector.url}/${link.code}`, { 'user-agent': UA.androidChrome }, 'HEAD');
    expect(head.status).toBe(302);
    expect(findInstallToken(installReferrer(playUrlOf(head.headers.get('location')!)))).toMatch(TOKEN);
    // A GET afterwards is the only visit queued.
    const get = await visit(`${redirector.url}/${link.code}`, { 'user-agent': UA.androidChrome });
    const token = findInstallToken(installReferrer(playUrlOf(get.headers.get('location')!)));
    expect(await redirectEvents(link.id, 1)).toEqual([{ platform: 'ANDROID', token, language: null }]);
  });
});

describe('the iOS page', () => {
  /** The data-copy URL of the page's store button, HTML-unescaped; undefined when it has none. */
  const copyUrlOf = (page: string) => /id="fallback" href="[^"]*" data-copy="([^"]*)"/.exec(page)?.[1]?.replace(/&amp;/g, '&');

  it("gives the App Store button the short URL with a new token to copy, queued with the visit's REDIRECT", async () => {
    const { env, redirector, userId } = started;
    await env.sql`
      INSERT INTO apps (user_id, platform, name, team_id, bundle_id, app_store_id)
      VALUES (${userId}, 'ios', 'Acme Shop', 'ABCDE12345', 'com.acme.tokens', '1234567890')`;
    const link = await createLink(env.sql, userId, { iosLink: { url: 'acmeshop://product/42', bundleId: 'com.acme.tokens' } });
    const shortUrl = `${env.config.SHORT_URL_BASE.replace(/\/+$/, '')}/${link.code}`;
    const pages: string[] = [];
    for (const language of ['ja-JP', 'pt-BR']) {
      const response = await visit(`${redirector.url}/${link.code}`, { 'user-agent': UA.iphoneSafari, 'accept-language': language });
      expect(response.status).toBe(200);
      // The one script is the same on every page, so the policy's hash still allows it.
      const page = await response.text();
      const script = /<script>([\s\S]*?)<\/script>/.exec(page)![1]!;
      expect(response.headers.get('content-security-policy')).toBe(PAGE_CSP);
      expect(PAGE_CSP).toContain(`'sha256-${createHash('sha256').update(script).digest('base64')}'`);
      expect(page).toContain('id="fallback" href="https://apps.apple.com/app/id1234567890" data-copy="');
      expect(page).toContain('>Get Acme Shop on the App Store</a>');
      pages.push(page);
    }
    const copied = pages.map((page) => copyUrlOf(page)!);
    const tokens = copied.map((url) => {
      const { origin, pathname, searchParams } = new URL(url);
      expect(`${origin}${pathname}`).toBe(shortUrl);
      return searchParams.get(INSTALL_TOKEN_PARAM)!;
    });
    for (const [i, url] of copied.entries()) expect(findInstallToken(url)).toBe(tokens[i]);
    expect(tokens[0]).toMatch(TOKEN);
    expect(tokens[0]).not.toBe(tokens[1]);

    expect(await redirectEvents(link.id, 2)).toEqual(
      expect.arrayContaining([
        { platform: 'IOS', token: tokens[0], language: 'ja' },
        { platform: 'IOS', token: tokens[1], language: 'pt' },
      ]),
    );
  });

  it('keeps a web fallback as it was: no copy, no token, no event', async () => {
    const { env, redirector, userId } = started;
    const link = await createLink(env.sql, userId, {
      iosLink: { url: 'other://x', bundleId: 'com.unregistered.app', fallbackUrl: 'https://example.com/ios' },
    });
    const first = await (await visit(`${redirector.url}/${link.code}`, { 'user-agent': UA.iphoneSafari })).text();
    const second = await (await visit(`${redirector.url}/${link.code}`, { 'user-agent': UA.iphoneSafari })).text();
    expect(first).toBe(second);
    expect(first).toContain('<a class="button secondary" id="fallback" href="https://example.com/ios">Continue in the browser</a>');
    expect(await queuedWithoutEvents(link.id)).toEqual([]);
  });
});
