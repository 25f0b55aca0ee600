// Where expired links go, the branded pages, the iOS page's text and App Store fallback, and the
// preview page link-preview crawlers get.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkCacheId, PREVIEW_CRAWLERS, redisKeys } from '@deeplink/core';
import type { CachedDomain } from '@deeplink/core/db';
import type { CachedLink } from '@deeplink/core/redis';
import { clickQueue, createLink, newCode, queuedClicks, redirectorsWithOwnEnvironment, UA, visit, visitAs } from './support.js';

const redirectors = redirectorsWithOwnEnvironment();
let started: Awaited<ReturnType<typeof redirectors.start>>;
beforeAll(async () => {
  started = await redirectors.start({ BRAND_NAME: 'Acme Links', CLICK_FLUSH_MS: '20' });
});
afterAll(() => redirectors.stopAll());

const PAST = new Date(Date.now() - 60_000);

describe('dead ends', () => {
  it('sends an expired link with an expiredUrl there (302, uncached), and one without it to the branded 410 page', async () => {
    const { env, redirector, userId } = started;
    const withUrl = await createLink(env.sql, userId, { expirationDate: PAST, expiredUrl: 'https://example.com/sale-over' });
    const response = await visit(`${redirector.url}/${withUrl.code}`);
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('https://example.com/sale-over');
    expect(response.headers.get('cache-control')).toBe('private, no-store');

    const without = await createLink(env.sql, userId, { expirationDate: PAST });
    const gone = await visit(`${redirector.url}/${without.code}`);
    expect(gone.status).toBe(410);
    const page = await gone.text();
    expect(page).toContain('Link expired');
    expect(page).toContain('<footer>Acme Links</footer>');
  });

  it('names the product on the 404 page', async () => {
    const response = await visit(`${started.redirector.url}/nothing-here-at-all`);
    expect(response.status).toBe(404);
    const page = await response.text();
    expect(page).toContain('Link not found');
    expect(page).toContain('<title>Link not found · Acme Links</title>');
  });
});

describe('the iOS page', () => {
  it("shows the preview title and the registered app's name, the app button first, and falls back to its App Store page", async () => {
    const { env, redirector, userId } = started;
    await env.sql`
      INSERT INTO apps (user_id, platform, name, team_id, bundle_id, app_store_id)
      VALUES (${userId}, 'ios', 'Acme Shop', 'ABCDE12345', 'com.acme.shop', '1234567890')`;
    const link = await createLink(env.sql, userId, {
      title: 'Internal title',
      iosLink: { url: 'acmeshop://product/42', bundleId: 'com.acme.shop' },
      socialPreview: { title: 'Spring <sale>' },
    });
    const response = await visit(`${redirector.url}/${link.code}`, { 'user-agent': UA.iphoneSafari });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
    const page = await response.text();
    expect(page).toContain('<h1>Spring &lt;sale&gt;</h1>');
    expect(page).toContain('Open in Acme Shop');
    expect(page.indexOf('id="app"')).toBeLessThan(page.indexOf('id="fallback"'));
    expect(page).toContain('id="fallback" href="https://apps.apple.com/app/id1234567890"');
    expect(page).toContain('<footer>Acme Links</footer>');
  });

  it("keeps the link's own fallback, and its title when it has no preview", async () => {
    const { env, redirector, userId } = started;
    const link = await createLink(env.sql, userId, {
      title: 'Winter catalogue',
      iosLink: { url: 'other://x', bundleId: 'com.unregistered.app', fallbackUrl: 'https://example.com/ios' },
    });
    const page = await (await visit(`${redirector.url}/${link.code}`, { 'user-agent': UA.iphoneSafari })).text();
    expect(page).toContain('<h1>Winter catalogue</h1>');
    expect(page).toContain('Open in the app');
    expect(page).toContain('id="fallback" href="https://example.com/ios"');
  });
});

describe('social previews', () => {
  it('gives every crawler in the list the Open Graph page, and people the redirect; both reach the queue', async () => {
    const { env, redirector, userId } = started;
    const link = await createLink(env.sql, userId, {
      defaultUrl: 'https://example.com/spring',
      customParameters: { utm_source: 'social' },
      socialPreview: { title: 'Spring sale', description: 'Everything "20%" off', imageUrl: 'https://cdn.example.com/spring.png' },
    });
    const url = `${redirector.url}/${link.code}`;
    for (const crawler of PREVIEW_CRAWLERS) {
      const response = await visit(url, { 'user-agent': crawler.example });
      expect(response.status, crawler.name).toBe(200);
      expect(response.headers.get('content-type'), crawler.name).toBe('text/html; charset=utf-8');
      const page = await response.text();
      expect(page, crawler.name).toContain('<meta property="og:title" content="Spring sale">');
      expect(page, crawler.name).toContain('<meta property="og:description" content="Everything &quot;20%&quot; off">');
      expect(page, crawler.name).toContain('<meta property="og:image" content="https://cdn.example.com/spring.png">');
      expect(page, crawler.name).toContain('<meta name="twitter:card" content="summary_large_image">');
      expect(page, crawler.name).toContain('href="https://example.com/spring?utm_source=social"');
      // The page's own address, on the link's domain (SHORT_URL_BASE here), not the destination.
      expect(page, crawler.name).toContain(`<meta property="og:url" content="${env.config.SHORT_URL_BASE}/${link.code}">`);
    }
    for (const person of [UA.windowsChrome, UA.iphoneSafari, UA.androidChrome]) {
      const response = await visit(url, { 'user-agent': person });
      expect(response.status, person).toBe(302);
    }

    const queue = clickQueue(env.env.REDIS_URL!, env.env.QUEUE_PREFIX!);
    try {
      const clicksOfLink = async () => (await queuedClicks(queue)).filter((click) => click.linkId === link.id);
      await expect.poll(async () => (await clicksOfLink()).length, { timeout: 5_000 }).toBe(PREVIEW_CRAWLERS.length + 3);
      const agents = (await clicksOfLink()).map((click) => click.userAgent);
      expect(agents).toEqual(expect.arrayContaining(PREVIEW_CRAWLERS.map((crawler) => crawler.example)));
    } finally {
      await queue.close();
    }
  });

  it("checks a cached record's preview image again: a tampered record's script or data URL is never shown", async () => {
    const { env, redirector, userId } = started;
    const keys = redisKeys(env.config.REDIS_PREFIX);
    // A custom domain and a link on it, as records in Redis only, with what a tampered cache could hold.
    const hostname = `tampered${newCode().toLowerCase()}.example.test`;
    const record: CachedDomain = { id: '0b8f3c1e-0000-4000-8000-00000000d0d0', apps: [] };
    await env.redis.set(keys.domain(hostname), JSON.stringify(record));
    const images = ['javascript:alert(document.domain)', 'data:text/html,<script>alert(1)</script>', 'https://cdn.example.com/ok.png'];
    for (const imageUrl of images) {
      const link = await createLink(env.sql, userId, { defaultUrl: 'https://example.com/spring' });
      const code = newCode();
      const cached: CachedLink = {
        id: link.id,
        defaultUrl: 'https://example.com/spring',
        socialPreview: { title: 'Spring sale', imageUrl },
      };
      await env.redis.set(keys.link(linkCacheId(code, hostname)), JSON.stringify(cached));
      const response = await visitAs(`${redirector.url}/${code}`, hostname, { 'user-agent': PREVIEW_CRAWLERS[0].example });
      expect(response.status, imageUrl).toBe(200);
      if (imageUrl.startsWith('https:')) {
        expect(response.body).toContain(`<meta property="og:image" content="${imageUrl}">`);
      } else {
        expect(response.body, imageUrl).not.toContain(imageUrl.slice(0, imageUrl.indexOf(':') + 1));
        expect(response.body, imageUrl).not.toContain('og:image');
        expect(response.body, imageUrl).toContain('<meta name="twitter:card" content="summary">');
      }
      // The short URL on the domain the crawler asked, not the destination.
      expect(response.body, imageUrl).toContain(`<meta property="og:url" content="http://${hostname}/${code}">`);
    }
  });

  it('redirects crawlers like people when the link has no preview', async () => {
    const { env, redirector, userId } = started;
    const link = await createLink(env.sql, userId, { defaultUrl: 'https://example.com/plain' });
    const response = await visit(`${redirector.url}/${link.code}`, { 'user-agent': PREVIEW_CRAWLERS[0].example });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('https://example.com/plain');
  });
});
