// Password-protected and capped links end to end: links made through the API, visited on the
// redirector, their clicks rolled up by the worker, all three as processes. The redirector trusts the test as
// its proxy, so each test speaks for client addresses (X-Forwarded-For) and schemes of its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD_PAGE_CSP, PREVIEW_CRAWLERS } from '@deeplink/core';
import { createClient, type DeeplinkClient, type Link } from '../packages/client/src/index.js';
import { clickProducer, rolledUpClicks, waitForIdle, type ClickProducer } from '@deeplink/test-kit/clicks';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { startStack, type Stack } from '@deeplink/test-kit/stack';
import { UA } from '@deeplink/test-kit/user-agents';

const PASSWORD = 'open sesame';
const DESTINATION = 'https://example.com/members-only';

let env: TestEnvironment;
let stack: Stack;
let producer: ClickProducer;
let client: DeeplinkClient;
let addresses = 0;

beforeAll(async () => {
  env = await createTestEnvironment({ TRUST_PROXY: '127.0.0.1', RATE_LIMIT_MAX: '100000' });
  stack = await startStack(env.env);
  producer = clickProducer(env);
  client = createClient({ baseUrl: `${stack.apiUrl}/api` });
  await client.auth.register({ name: 'Gate', email: `gate-${process.pid}@example.com`, password: 'a long enough password' });
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  await producer?.close();
  await env?.close();
});

/** A client address of its own, so the attempt limit of one test does not reach another. */
const newAddress = () => `203.0.113.${++addresses}`;

const protectedLink = (extra: object = {}) =>
  client.links.create({ title: 'Members', defaultUrl: DESTINATION, password: PASSWORD, ...extra });

const codeOf = (link: Link) => new URL(link.url).pathname.slice(1);

/** A visit of the link's short URL without following redirects, from `address`. */
function open(link: Link, address: string, headers: Record<string, string> = {}, method = 'GET') {
  return fetch(link.url, {
    method,
    redirect: 'manual',
    headers: { 'user-agent': UA.windowsChrome, 'x-forwarded-for': address, ...headers },
  });
}

/** A POST of the password form, as a browser sends it. */
function submit(link: Link, password: string, address: string, headers: Record<string, string> = {}) {
  return fetch(link.url, {
    method: 'POST',
    redirect: 'manual',
    body: new URLSearchParams({ password }),
    headers: { 'user-agent': UA.windowsChrome, 'x-forwarded-for': address, ...headers },
  });
}

/** The `name=value` part of a Set-Cookie header, as a browser sends it back. */
const cookiePair = (response: Response) => response.headers.get('set-cookie')!.split(';')[0]!;

describe('password-protected links', () => {
  it('answer a form page without the destination: strict CSP, no-store, noindex, crawlers included', async () => {
    const link = await protectedLink({ socialPreview: { title: 'Members area', description: 'Secret plans' } });
    expect(link.passwordProtected).toBe(true);
    for (const userAgent of [UA.windowsChrome, UA.iphoneSafari, PREVIEW_CRAWLERS[0].example]) {
      const response = await open(link, newAddress(), { 'user-agent': userAgent });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(response.headers.get('content-security-policy')).toBe(PASSWORD_PAGE_CSP);
      expect(PASSWORD_PAGE_CSP).toContain("default-src 'none'");
      expect(PASSWORD_PAGE_CSP).not.toContain('script-src');
      expect(response.headers.get('cache-control')).toBe('private, no-store');
      expect(response.headers.get('x-robots-tag')).toBe('noindex');
      expect(response.headers.get('set-cookie')).toBeNull();
      const body = await response.text();
      expect(body).toContain('<form method="post">');
      expect(body).toContain('name="password" type="password"');
      expect(body).toContain('Members area');
      expect(body).not.toContain('example.com');
      expect(body).not.toContain('Secret plans');
      expect(body).not.toContain('og:');
      expect(body).not.toContain('<script');
    }
    const head = await open(link, newAddress(), {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers.get('location')).toBeNull();
  });

  it('answer a wrong password with the form again, 401, and a right one with the destination and a pass for that link only', async () => {
    const link = await protectedLink();
    const other = await protectedLink();
    const address = newAddress();

    const wrong = await submit(link, 'not the password', address);
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('content-security-policy')).toBe(PASSWORD_PAGE_CSP);
    expect(wrong.headers.get('set-cookie')).toBeNull();
    const wrongBody = await wrong.text();
    expect(wrongBody).toContain('id="error"');
    expect(wrongBody).not.toContain(DESTINATION);

    const right = await submit(link, PASSWORD, address);
    expect(right.status).toBe(302);
    expect(right.headers.get('location')).toBe(DESTINATION);
    const setCookie = right.headers.get('set-cookie')!;
    expect(setCookie).toMatch(new RegExp(`^link_pass=\\d+\\.[A-Za-z0-9_-]+; Path=/${codeOf(link)}; Max-Age=3600; HttpOnly; SameSite=Lax$`));

    // The pass: straight to the destination, no form.
    const again = await open(link, address, { cookie: cookiePair(right) });
    expect(again.status).toBe(302);
    expect(again.headers.get('location')).toBe(DESTINATION);
    // The same pass at another link (sent there by hand: a browser would not), or tampered with: the form.
    expect((await open(other, address, { cookie: cookiePair(right) })).status).toBe(200);
    const tampered = cookiePair(right).replace(/=(\d+)\./, (_, expiry: string) => `=${Number(expiry) + 86_400}.`);
    expect((await open(link, address, { cookie: tampered })).status).toBe(200);

    // Over https (as the trusted proxy says), the pass is Secure.
    const secure = await submit(other, PASSWORD, newAddress(), { 'x-forwarded-proto': 'https' });
    expect(secure.status).toBe(302);
    expect(secure.headers.get('set-cookie')).toMatch(/; Secure$/);
  });

  it('limit attempts per client address and link: the sixth within a minute is 429 with Retry-After', async () => {
    const link = await protectedLink();
    const address = newAddress();
    for (let attempt = 1; attempt <= 5; attempt++) expect((await submit(link, `wrong ${attempt}`, address)).status).toBe(401);
    const limited = await submit(link, PASSWORD, address);
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(await limited.text()).not.toContain(DESTINATION);
    // Another address, and the same address at another link, still get their attempts.
    expect((await submit(link, PASSWORD, newAddress())).status).toBe(302);
    expect((await submit(await protectedLink(), PASSWORD, address)).status).toBe(302);
  });

  it('count a click only for the visit that reached the destination, exactly once through the worker', async () => {
    const link = await protectedLink();
    const address = newAddress();
    expect((await open(link, address)).status).toBe(200);
    expect((await submit(link, 'not it', address)).status).toBe(401);
    expect((await submit(link, PASSWORD, address)).status).toBe(302);
    await expect.poll(() => rolledUpClicks(env.sql, link.id), { timeout: 20_000, interval: 100 }).toBe(1);
    await waitForIdle(producer.queue);
    expect(await rolledUpClicks(env.sql, link.id)).toBe(1);
  });

  it('leave open links as they were: a POST is 405, and removing a password opens the link', async () => {
    const link = await protectedLink();
    const opened = await client.links.update(link.id, { password: null });
    expect(opened.passwordProtected).toBe(false);
    await expect
      .poll(async () => (await open(link, newAddress())).headers.get('location'), { timeout: 5_000, interval: 50 })
      .toBe(DESTINATION);
    const post = await submit(link, PASSWORD, newAddress());
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('refuse a form larger than a few kilobytes with 413', async () => {
    const link = await protectedLink();
    const response = await submit(link, 'x'.repeat(10_000), newAddress());
    expect(response.status).toBe(413);
  });

  it('have a debug page that says so without naming a destination', async () => {
    const link = await protectedLink({ desktopUrl: 'https://example.com/desktop-secret' });
    const response = await fetch(`${link.url}?d=1`, { headers: { 'x-forwarded-for': newAddress() } });
    expect(response.status).toBe(200);
    const body = await response.text();
    expect(body).toContain('protected by a password');
    expect(body).not.toContain('members-only');
    expect(body).not.toContain('desktop-secret');
  });
});

describe('capped links', () => {
  const OVERFLOW = 'https://example.com/sold-out';

  it('send visitors past the cap to the overflow URL, with only the clicks let through rolled up by the worker', async () => {
    const link = await client.links.create({ title: 'First three', defaultUrl: DESTINATION, clickCap: 3, capOverflowUrl: OVERFLOW });
    expect(link).toMatchObject({ clickCap: 3, capOverflowUrl: OVERFLOW, passwordProtected: false });
    const answers = await Promise.all(Array.from({ length: 8 }, () => open(link, newAddress())));
    const locations = answers.map((answer) => answer.headers.get('location')).sort();
    expect(locations).toEqual([...Array(3).fill(DESTINATION), ...Array(5).fill(OVERFLOW)].sort());
    await expect.poll(() => rolledUpClicks(env.sql, link.id), { timeout: 20_000, interval: 100 }).toBe(3);
    await waitForIdle(producer.queue);
    expect(await rolledUpClicks(env.sql, link.id)).toBe(3);
  });

  it("count a protected link's click only after its password, and pass the cap's answer on with the pass", async () => {
    const link = await protectedLink({ clickCap: 1 });
    expect((await open(link, newAddress())).status).toBe(200);
    const first = await submit(link, PASSWORD, newAddress());
    expect(first.headers.get('location')).toBe(DESTINATION);
    const second = await submit(link, PASSWORD, newAddress());
    expect(second.status).toBe(410);
    expect(second.headers.get('set-cookie')).toMatch(/^link_pass=/);
    await expect.poll(() => rolledUpClicks(env.sql, link.id), { timeout: 20_000, interval: 100 }).toBe(1);
  });
});
