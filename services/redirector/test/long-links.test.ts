// Long dynamic links (/?link=…) on the redirector process: each distinct one becomes a link of the
// domain's owner on its first visit and is answered as that link afterwards; only destinations the
// domain's allowed URL patterns match are answered; the default domain answers none; a domain
// stops making new ones at LONG_LINKS_PER_DOMAIN_MAX.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PREVIEW_CRAWLERS } from '@deeplink/core';
import { linksRepository } from '@deeplink/core/db';
import { clickQueue, queuedClicks, redirectorsWithOwnEnvironment, UA, visitAs } from './support.js';

const redirectors = redirectorsWithOwnEnvironment();
let started: Awaited<ReturnType<typeof redirectors.start>>;
beforeAll(async () => {
  started = await redirectors.start({ LONG_LINKS_PER_DOMAIN_MAX: '3', CLICK_FLUSH_MS: '20', UNKNOWN_CODE_BURST: '1000' });
});
afterAll(() => redirectors.stopAll());

let domains = 0;
/** An active custom domain of the test's user with these patterns, straight into PostgreSQL. */
async function domainWith(patterns: string[]): Promise<{ hostname: string; id: string }> {
  const hostname = `long${process.pid}x${++domains}.example.test`;
  const [row] = await started.env.sql<{ id: string }[]>`
    INSERT INTO domains (user_id, hostname, verification_token, verified_at, allowed_url_patterns)
    VALUES (${started.userId}, ${hostname}, 't', now(), ${started.env.sql.array(patterns)}::text[]) RETURNING id`;
  return { hostname, id: row!.id };
}

const longLink = (params: Record<string, string>) => `${started.redirector.url}/?${new URLSearchParams(params)}`;
const linksOn = (domainId: string) =>
  started.env.sql<{ code: string; user_id: string }[]>`SELECT code, user_id FROM links WHERE domain_id = ${domainId} ORDER BY created_at`;

describe('long links', () => {
  it('make one link of the owner per distinct long link, answered like its short code, clicks and all', async () => {
    const { hostname, id } = await domainWith(['https://example.com/*']);
    const params = { link: 'https://example.com/welcome', apn: 'com.example.app', amv: '42', ofl: 'https://example.com/desktop' };
    const desktop = await visitAs(longLink(params), hostname);
    expect(desktop).toMatchObject({ status: 302, location: 'https://example.com/desktop' });
    const android = await visitAs(longLink(params), hostname, { 'user-agent': UA.androidChrome });
    expect(android.status).toBe(302);
    expect(android.location).toMatch(
      /^intent:\/\/example\.com\/welcome#Intent;scheme=https;package=com\.example\.app;.*S\.min_version=42;end$/,
    );
    // The same parameters in another order are the same link; another value makes another one.
    await visitAs(longLink({ ofl: params.ofl, amv: '42', apn: params.apn, link: params.link }), hostname);
    await visitAs(longLink({ ...params, amv: '43' }), hostname);
    const links = await linksOn(id);
    expect(links).toHaveLength(2);
    expect(links.every((link) => link.user_id === started.userId)).toBe(true);
    // The short code answers the same.
    expect(await visitAs(`${started.redirector.url}/${links[0]!.code}`, hostname)).toMatchObject({
      status: 302,
      location: 'https://example.com/desktop',
    });

    const queue = clickQueue(started.env.config.REDIS_URL, started.env.config.QUEUE_PREFIX);
    try {
      const first = (await linksRepository(started.env.sql).findByCode(links[0]!.code, hostname))!;
      await expect.poll(async () => (await queuedClicks(queue)).filter((click) => click.linkId === first.id).length).toBe(4);
    } finally {
      await queue.close();
    }
  });

  it('show the app page on iOS unless efr=1, the iPad its own fallback, and crawlers the social card', async () => {
    const { hostname } = await domainWith(['https://example.com/*']);
    const params = {
      link: 'https://example.com/item',
      ibi: 'com.example.ios',
      ifl: 'https://example.com/ios',
      ipfl: 'https://example.com/ipad',
      st: 'The item',
      sd: 'All about it',
    };
    const iphone = await visitAs(longLink(params), hostname, { 'user-agent': UA.iphoneSafari });
    expect(iphone.status).toBe(200);
    expect(iphone.body).toContain('com.example.ios://google/link/?deep_link_id=https%3A%2F%2Fexample.com%2Fitem');
    expect(iphone.body).toContain('https://example.com/ios');
    const ipad = await visitAs(longLink(params), hostname, { 'user-agent': UA.ipadSafari });
    expect(ipad.body).toContain('https://example.com/ipad');
    expect(ipad.body).not.toContain('https://example.com/ios"');
    const forced = await visitAs(longLink({ ...params, efr: '1' }), hostname, { 'user-agent': UA.iphoneSafari });
    expect(forced).toMatchObject({ status: 302, location: 'https://example.com/ios' });
    const crawler = await visitAs(longLink(params), hostname, { 'user-agent': PREVIEW_CRAWLERS[0].example });
    expect(crawler.status).toBe(200);
    expect(crawler.body).toContain('<meta property="og:title" content="The item">');
    expect(crawler.body).toContain('<meta property="og:description" content="All about it">');
  });

  it('answer ?d=1 with the debug page of the link they became, iPad and forced redirect included', async () => {
    const { hostname } = await domainWith(['https://example.com/*']);
    const params = {
      link: 'https://example.com/item',
      ibi: 'com.example.ios',
      ifl: 'https://example.com/ios',
      ipfl: 'https://example.com/ipad',
      efr: '1',
    };
    const page = await visitAs(`${longLink(params)}&d=1`, hostname);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain('302 to https://example.com/ios');
    expect(page.body).toContain('302 to https://example.com/ipad');
    expect(page.body).toContain('skipAppPage');
    // The page is no visit: the long link itself still redirects, and d=1 outside the allow-list is a 404.
    expect(await visitAs(longLink(params), hostname, { 'user-agent': UA.iphoneSafari })).toMatchObject({
      status: 302,
      location: 'https://example.com/ios',
    });
    expect((await visitAs(`${longLink({ link: 'https://evil.test/' })}&d=1`, hostname)).status).toBe(404);
  });

  it.each([
    ['link', { link: 'https://evil.test/' }],
    ['afl', { link: 'https://example.com/', apn: 'com.example.app', afl: 'https://evil.test/a' }],
    ['ifl', { link: 'https://example.com/', ibi: 'com.example.ios', ifl: 'https://evil.test/i' }],
    ['ipfl', { link: 'https://example.com/', ibi: 'com.example.ios', ipfl: 'https://evil.test/p' }],
    ['ofl', { link: 'https://example.com/', ofl: 'https://evil.test/o' }],
  ])('refuse a %s outside the allowed URL patterns (404, no link made)', async (_, params) => {
    const { hostname, id } = await domainWith(['https://example.com/*']);
    const response = await visitAs(longLink(params), hostname);
    expect(response.status).toBe(404);
    expect(await linksOn(id)).toHaveLength(0);
  });

  it('are a 404 on a domain without patterns, and on the default domain', async () => {
    const { hostname, id } = await domainWith([]);
    expect((await visitAs(longLink({ link: 'https://example.com/' }), hostname)).status).toBe(404);
    expect(await linksOn(id)).toHaveLength(0);
    expect((await visitAs(longLink({ link: 'https://example.com/' }), '127.0.0.1')).status).toBe(404);
  });

  it('stop making new links at LONG_LINKS_PER_DOMAIN_MAX, the existing ones still answered, with a log line', async () => {
    const { hostname, id } = await domainWith(['https://example.com/*']);
    for (const n of [1, 2, 3]) {
      expect((await visitAs(longLink({ link: `https://example.com/${n}` }), hostname)).status).toBe(302);
    }
    expect((await visitAs(longLink({ link: 'https://example.com/4' }), hostname)).status).toBe(404);
    expect(await linksOn(id)).toHaveLength(3);
    // One made before the cap still answers.
    expect(await visitAs(longLink({ link: 'https://example.com/2' }), hostname)).toMatchObject({
      status: 302,
      location: 'https://example.com/2',
    });
    await expect.poll(() => started.redirector.output.some((line) => line.includes('LONG_LINKS_PER_DOMAIN_MAX'))).toBe(true);
  });

  it('leave ordinary short links and the root without a query as they were', async () => {
    const { hostname } = await domainWith(['https://example.com/*']);
    expect((await visitAs(`${started.redirector.url}/`, hostname)).status).toBe(404);
    expect((await visitAs(`${started.redirector.url}/?apn=com.example.app`, hostname)).status).toBe(404);
  });
});
