// App keys and the open call: a publishable key per app, shown once, rotated at once, good for
// POST /app/open on its owner's links and for nothing else (real API, PostgreSQL, Redis, DNS).
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from '@deeplink/test-kit/dns-server';
import { createApiHarness, type ApiHarness } from './harness.js';

let api: ApiHarness;
let dns: DnsServer;

beforeAll(async () => {
  dns = await startDnsServer();
  api = await createApiHarness({ env: { DNS_SERVERS: dns.address } });
});
afterAll(async () => {
  await api?.close();
  await dns?.close();
});

type AppWithKey = { id: string; key: string; keyPrefix: string; keyCreatedAt: string; platform: string };

let bundle = 0;
async function createIosApp(token: string, bundleId = `com.example.app${++bundle}`): Promise<AppWithKey> {
  const response = await api.request({
    method: 'POST',
    url: '/api/apps',
    token,
    payload: { platform: 'ios', teamId: 'ABCDE12345', bundleId },
  });
  expect(response.statusCode).toBe(201);
  return response.json().data.app;
}

async function createLink(token: string, fields: Record<string, unknown> = {}): Promise<{ id: string; code: string; url: string }> {
  const response = await api.request({
    method: 'POST',
    url: '/api/links',
    token,
    payload: { title: 'Spring', defaultUrl: 'https://shop.example.com/spring', ...fields },
  });
  expect(response.statusCode, response.body).toBe(201);
  const { id, url } = response.json().data.link;
  return { id, url, code: new URL(url).pathname.slice(1) };
}

const open = (key: string | undefined, payload: unknown, remoteAddress?: string) =>
  api.request({
    method: 'POST',
    url: '/api/app/open',
    headers: key === undefined ? {} : { 'x-app-key': key },
    payload: payload as Record<string, unknown>,
    ...(remoteAddress && { remoteAddress }),
  });

/** An active custom domain of the user, proven through the (test) DNS server. */
async function activeDomain(token: string, hostname: string): Promise<void> {
  const created = await api.request({ method: 'POST', url: '/api/domains', token, payload: { hostname } });
  expect(created.statusCode).toBe(201);
  const { id, verification } = created.json().data.domain;
  dns.records.set(verification.name, [verification.value]);
  const verified = await api.request({ method: 'POST', url: `/api/domains/${id}/verify`, token });
  expect(verified.json().data.domain.status).toBe('active');
}

describe('app keys', () => {
  it('are created with the app, shown in full once, listed by prefix and stored only as their SHA-256', async () => {
    const user = await api.registerUser();
    const app = await createIosApp(user.token);
    expect(app.key).toMatch(/^dla_[A-Za-z0-9_-]{43}$/);
    expect(app.keyPrefix).toBe(app.key.slice(0, 12));
    expect(app.keyCreatedAt).toMatch(/^\d{4}-\d\d-\d\dT/);

    const list = await api.request({ method: 'GET', url: '/api/apps', token: user.token });
    const listed = list.json().data.apps[0];
    expect(listed).toMatchObject({ id: app.id, keyPrefix: app.keyPrefix, keyCreatedAt: app.keyCreatedAt });
    expect(listed).not.toHaveProperty('key');
    expect(list.body).not.toContain(app.key);

    const [row] = await api.env.sql<{ key_hash: Buffer }[]>`SELECT key_hash FROM apps WHERE id = ${app.id}`;
    expect(row!.key_hash.equals(createHash('sha256').update(app.key).digest())).toBe(true);
    expect(JSON.stringify(await api.env.sql`SELECT * FROM apps`)).not.toContain(app.key);
  });

  it('rotate: the new key is shown once and works, the old one stops at once', async () => {
    const user = await api.registerUser();
    const app = await createIosApp(user.token);
    const link = await createLink(user.token);
    expect((await open(app.key, { url: link.url })).statusCode).toBe(200);

    const rotated = await api.request({ method: 'POST', url: `/api/apps/${app.id}/key`, token: user.token });
    expect(rotated.statusCode).toBe(200);
    const fresh = rotated.json().data.app as AppWithKey;
    expect(fresh).toMatchObject({ id: app.id, platform: 'ios' });
    expect(fresh.key).toMatch(/^dla_/);
    expect(fresh.key).not.toBe(app.key);
    expect(fresh.keyPrefix).toBe(fresh.key.slice(0, 12));

    const stale = await open(app.key, { url: link.url });
    expect(stale.statusCode).toBe(401);
    expect(stale.json().error.code).toBe('UNAUTHORIZED');
    expect((await open(fresh.key, { url: link.url })).statusCode).toBe(200);
    const listed = (await api.request({ method: 'GET', url: '/api/apps', token: user.token })).json().data.apps[0];
    expect(listed.keyPrefix).toBe(fresh.keyPrefix);
  });

  it("cannot rotate another account's app (403) or an unknown one (404)", async () => {
    const owner = await api.registerUser();
    const intruder = await api.registerUser();
    const app = await createIosApp(owner.token);
    const foreign = await api.request({ method: 'POST', url: `/api/apps/${app.id}/key`, token: intruder.token });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.body).not.toContain('dla_');
    for (const id of ['00000000-0000-0000-0000-000000000000', 'not-a-uuid']) {
      const missing = await api.request({ method: 'POST', url: `/api/apps/${id}/key`, token: owner.token });
      expect(missing.statusCode).toBe(404);
      expect(missing.json().error.code).toBe('NOT_FOUND');
    }
    // The owner's key still works: the refused rotation changed nothing.
    const link = await createLink(owner.token);
    expect((await open(app.key, { url: link.url })).statusCode).toBe(200);
  });

  it('record their last call (open or install), at most once a minute, for the debug page', async () => {
    const user = await api.registerUser();
    const app = await createIosApp(user.token);
    const link = await createLink(user.token);
    const lastCall = async () => {
      const [row] = await api.env.sql<{ at: Date | null; call: string | null }[]>`
        SELECT key_last_used_at AS at, key_last_call AS call FROM apps WHERE id = ${app.id}`;
      return row!;
    };
    expect(await lastCall()).toEqual({ at: null, call: null });
    expect((await open(app.key, { url: link.url })).statusCode).toBe(200);
    await expect.poll(async () => (await lastCall()).call).toBe('open');
    const first = (await lastCall()).at!;

    // Within the minute: no write, whatever the call.
    const install = () =>
      api.request({ method: 'POST', url: '/api/app/install', headers: { 'x-app-key': app.key }, payload: { installId: randomUUID() } });
    expect((await install()).statusCode).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await lastCall()).toEqual({ at: first, call: 'open' });

    // A minute later, the next call is recorded.
    await api.env.sql`UPDATE apps SET key_last_used_at = now() - interval '2 minutes' WHERE id = ${app.id}`;
    expect((await install()).statusCode).toBe(200);
    await expect.poll(async () => (await lastCall()).call).toBe('install');
    expect((await lastCall()).at!.getTime()).toBeGreaterThan(first.getTime());
  });

  it('an app without a key (registered before keys existed) lists null and gets one by rotation', async () => {
    const user = await api.registerUser();
    const app = await createIosApp(user.token);
    await api.env.sql`UPDATE apps SET key_prefix = NULL, key_hash = NULL, key_created_at = NULL WHERE id = ${app.id}`;
    const listed = (await api.request({ method: 'GET', url: '/api/apps', token: user.token })).json().data.apps[0];
    expect(listed).toMatchObject({ keyPrefix: null, keyCreatedAt: null });
    const rotated = await api.request({ method: 'POST', url: `/api/apps/${app.id}/key`, token: user.token });
    expect(rotated.json().data.app.key).toMatch(/^dla_/);
  });
});

describe('POST /app/open', () => {
  it("resolves its owner's link on the default domain: deep link, minimum version, parameters, id and code", async () => {
    const user = await api.registerUser();
    const app = await createIosApp(user.token, 'com.acme.shop');
    const link = await createLink(user.token, {
      slug: `spring-${Date.now()}`,
      iosLink: { url: 'acmeshop://product/42', bundleId: 'com.acme.shop', minimumVersion: '2.4' },
      androidLink: { url: 'acmeshop://android/42', appPackageName: 'com.acme.shop' },
      customParameters: { utm_source: 'newsletter', utm_campaign: 'spring' },
    });
    const response = await open(app.key, { url: `${link.url}?ref=mail`, openId: crypto.randomUUID(), firstLaunch: true });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({
      success: true,
      data: {
        link: { id: link.id, code: link.code, url: link.url },
        deepLink: 'acmeshop://product/42',
        minimumVersion: '2.4',
        parameters: { utm_source: 'newsletter', utm_campaign: 'spring' },
        webUrl: 'https://shop.example.com/spring?utm_source=newsletter&utm_campaign=spring',
      },
    });
  });

  it("gives an Android app its androidLink, and no deep link when the link's app is another one", async () => {
    const user = await api.registerUser();
    const created = await api.request({
      method: 'POST',
      url: '/api/apps',
      token: user.token,
      payload: { platform: 'android', packageName: 'com.acme.shop', sha256CertFingerprints: [Array(32).fill('AB').join(':')] },
    });
    const android = created.json().data.app as AppWithKey;
    expect(android.key).toMatch(/^dla_/);
    const ios = await createIosApp(user.token, 'com.acme.other');
    const link = await createLink(user.token, {
      iosLink: { url: 'acmeshop://product/42', bundleId: 'com.acme.shop' },
      androidLink: { url: 'acmeshop://android/42', appPackageName: 'com.acme.shop', minimumVersion: '310' },
    });
    const forAndroid = (await open(android.key, { url: link.url })).json().data;
    expect(forAndroid).toMatchObject({ deepLink: 'acmeshop://android/42', minimumVersion: '310', parameters: {} });
    const forOtherIosApp = (await open(ios.key, { url: link.url })).json().data;
    expect(forOtherIosApp).not.toHaveProperty('deepLink');
    expect(forOtherIosApp).not.toHaveProperty('minimumVersion');
    expect(forOtherIosApp).toMatchObject({ link: { id: link.id }, webUrl: 'https://shop.example.com/spring' });
  });

  it("resolves its owner's link on the owner's custom domain", async () => {
    const user = await api.registerUser();
    const hostname = `go${Date.now()}.example.test`;
    await activeDomain(user.token, hostname);
    const app = await createIosApp(user.token);
    const link = await createLink(user.token, { domain: hostname, slug: 'offer' });
    expect(link.url).toBe(`${new URL(api.env.config.SHORT_URL_BASE).protocol}//${hostname}/offer`);
    const response = await open(app.key, { url: `https://${hostname.toUpperCase()}/offer?x=1` });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().data.link).toEqual({ id: link.id, code: 'offer', url: link.url });
    // The same code on the default domain is another link (here: none).
    const base = new URL(api.env.config.SHORT_URL_BASE);
    expect((await open(app.key, { url: `${base.origin}/offer` })).statusCode).toBe(404);
  });

  it("answers one 404 for another account's link, its custom domain, unknown, deleted and expired links", async () => {
    const owner = await api.registerUser();
    const other = await api.registerUser();
    const app = await createIosApp(owner.token);
    const hostname = `other${Date.now()}.example.test`;
    await activeDomain(other.token, hostname);
    const theirs = await createLink(other.token);
    const theirsOnDomain = await createLink(other.token, { domain: hostname, slug: 'theirs' });
    const deleted = await createLink(owner.token);
    await api.request({ method: 'DELETE', url: `/api/links/${deleted.id}`, token: owner.token });
    const expired = await createLink(owner.token);
    await api.env.sql`UPDATE links SET expires_at = now() - interval '1 minute' WHERE id = ${expired.id}`;
    const base = new URL(api.env.config.SHORT_URL_BASE);

    const answers = [];
    for (const url of [
      theirs.url,
      theirsOnDomain.url,
      deleted.url,
      expired.url,
      `${base.origin}/no-such-code-${Date.now()}`,
      `https://unknown-${Date.now()}.example.test/abc`,
      `${base.origin}/`,
      `${base.origin}/a/b`,
    ]) {
      const response = await open(app.key, { url });
      expect(response.statusCode, url).toBe(404);
      answers.push(response.body);
    }
    expect(new Set(answers).size).toBe(1);
    expect(JSON.parse(answers[0]!)).toEqual({
      success: false,
      error: { code: 'NOT_FOUND', message: 'No link of this app at this URL', details: [] },
    });
  });

  it('refuses a missing or unknown key (401) and bad bodies (400 envelope)', async () => {
    const user = await api.registerUser();
    const app = await createIosApp(user.token);
    for (const key of [undefined, '', 'dla_nope', 'dlk_nope']) {
      const response = await open(key, { url: 'https://example.com/abc' });
      expect(response.statusCode, String(key)).toBe(401);
      expect(response.json().error.code).toBe('UNAUTHORIZED');
    }
    // A Bearer credential, even a valid login token, is no app key.
    const bearer = await api.request({
      method: 'POST',
      url: '/api/app/open',
      token: user.token,
      payload: { url: 'https://example.com/a' },
    });
    expect(bearer.statusCode).toBe(401);

    const bad: [unknown, string][] = [
      [{}, 'url'],
      [{ url: 'not a url' }, 'url'],
      [{ url: 'ftp://example.com/abc' }, 'url'],
      [{ url: `https://example.com/${'a'.repeat(3000)}` }, 'url'],
      [{ url: 'https://example.com/abc', openId: 'short' }, 'openId'],
      [{ url: 'https://example.com/abc', openId: 'has spaces in it' }, 'openId'],
      [{ url: 'https://example.com/abc', firstLaunch: 'yes' }, 'firstLaunch'],
      [{ url: 'https://example.com/abc', extra: 1 }, ''],
    ];
    for (const [payload, field] of bad) {
      const response = await open(app.key, payload);
      expect(response.statusCode, JSON.stringify(payload)).toBe(400);
      const { error } = response.json();
      expect(error.code).toBe('INVALID_REQUEST');
      if (field) expect(error.details.map((detail: { field: string }) => detail.field)).toContain(field);
    }
    const text = await api.request({
      method: 'POST',
      url: '/api/app/open',
      headers: { 'x-app-key': app.key, 'content-type': 'application/json' },
      payload: '{"url":',
    });
    expect(text.statusCode).toBe(400);
    expect(text.json().success).toBe(false);
  });
});

describe('an app key on any other route', () => {
  it('is refused like any invalid credential (401), as a Bearer token or an X-API-Key header', async () => {
    const user = await api.registerUser();
    const app = await createIosApp(user.token);
    const link = await createLink(user.token);
    const document = (await api.request({ method: 'GET', url: '/api/docs/json' })).json();
    const operations = Object.entries(document.paths as Record<string, Record<string, { security?: unknown[]; tags?: string[] }>>).flatMap(
      ([path, item]) => Object.entries(item).map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
    );
    // Every operation that takes credentials: the public ones (register, login, health) have `security: []`.
    const protectedOperations = operations.filter(
      ({ operation }) => !(Array.isArray(operation.security) && operation.security.length === 0) && !operation.tags?.includes('App SDK'),
    );
    expect(protectedOperations.length).toBeGreaterThan(20);
    expect(operations.some(({ path }) => path === '/api/app/open')).toBe(true);

    for (const { path, method } of protectedOperations) {
      const url = path.replace(/\{[^}]+\}/g, path.startsWith('/api/apps') ? app.id : link.id);
      for (const headers of [{ authorization: `Bearer ${app.key}` }, { 'x-api-key': app.key }]) {
        const response = await api.request({
          method: method as 'GET',
          url,
          headers: { ...headers, 'content-type': 'application/json' },
          ...(method !== 'GET' && method !== 'DELETE' && { payload: '{}' }),
        });
        expect(response.statusCode, `${method} ${url} with ${Object.keys(headers)[0]}`).toBe(401);
        // Firebase's REST paths answer in Google's error shape.
        if (path.startsWith('/v1/')) expect(response.json().error.status).toBe('UNAUTHENTICATED');
        else expect(response.json().error.code).toBe('UNAUTHORIZED');
      }
    }
    // …and in the query, where those paths take an API key.
    const inQuery = await api.request({
      method: 'POST',
      url: `/v1/shortLinks?key=${app.key}`,
      payload: { dynamicLinkInfo: { link: 'https://example.com/' } },
    });
    expect(inQuery.statusCode).toBe(401);
    expect(inQuery.json().error.status).toBe('UNAUTHENTICATED');
    // Nothing changed on the way: the app and its key are as they were.
    expect((await open(app.key, { url: link.url })).statusCode).toBe(200);
  });
});

describe('logs', () => {
  it('never hold an app key, created, used, refused or rotated', async () => {
    const logged = await createApiHarness({ captureLogs: true });
    try {
      const user = await logged.registerUser();
      const created = await logged.request({
        method: 'POST',
        url: '/api/apps',
        token: user.token,
        payload: { platform: 'ios', teamId: 'ABCDE12345', bundleId: 'com.example.logged' },
      });
      const { id, key } = created.json().data.app;
      const payload = { url: 'https://example.com/abc' };
      await logged.request({ method: 'POST', url: '/api/app/open', headers: { 'x-app-key': key }, payload });
      await logged.request({ method: 'GET', url: '/api/links', headers: { authorization: `Bearer ${key}` } });
      const rotated = await logged.request({ method: 'POST', url: `/api/apps/${id}/key`, token: user.token });
      await logged.request({ method: 'POST', url: '/api/app/open', headers: { 'x-app-key': key }, payload });
      const logs = logged.logs.join('\n');
      expect(logs).toContain('/api/app/open');
      expect(logs).not.toContain(key);
      expect(logs).not.toContain(rotated.json().data.app.key);
    } finally {
      await logged.close();
    }
  });
});

describe('app endpoint rate limits', () => {
  let limited: ApiHarness;
  beforeAll(async () => {
    limited = await createApiHarness({ env: { APP_RATE_LIMIT_MAX: '3', APP_RATE_LIMIT_ADDRESS_MAX: '4' } });
  });
  afterAll(() => limited?.close());

  const openOn = (key: string, remoteAddress: string) =>
    limited.request({
      method: 'POST',
      url: '/api/app/open',
      headers: { 'x-app-key': key },
      payload: { url: 'https://example.com/abc' },
      remoteAddress,
    });
  const newKey = async (token: string) =>
    (
      await limited.request({
        method: 'POST',
        url: '/api/apps',
        token,
        payload: { platform: 'ios', teamId: 'ABCDE12345', bundleId: `com.example.limit${++bundle}` },
      })
    ).json().data.app.key as string;

  it('stops an app key past its limit, whatever the address, with 429 and Retry-After', async () => {
    const user = await limited.registerUser();
    const key = await newKey(user.token);
    for (let i = 1; i <= 3; i++) expect((await openOn(key, `10.1.0.${i}`)).statusCode).toBe(404);
    const over = await openOn(key, '10.1.0.9');
    expect(over.statusCode).toBe(429);
    expect(over.json().error.code).toBe('RATE_LIMITED');
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(over.headers['x-ratelimit-limit']).toBe('3');
    // Another app's key is counted apart.
    expect((await openOn(await newKey(user.token), '10.1.0.10')).statusCode).toBe(404);
  });

  it('stops an address past its limit, whatever keys it sends, unknown ones included', async () => {
    const user = await limited.registerUser();
    const first = await newKey(user.token);
    const second = await newKey(user.token);
    expect((await openOn('dla_unknown', '10.2.0.1')).statusCode).toBe(401);
    expect((await openOn(first, '10.2.0.1')).statusCode).toBe(404);
    expect((await openOn(first, '10.2.0.1')).statusCode).toBe(404);
    expect((await openOn(second, '10.2.0.1')).statusCode).toBe(404);
    const over = await openOn(second, '10.2.0.1');
    expect(over.statusCode).toBe(429);
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(over.headers['x-ratelimit-limit']).toBe('4');
    // Another address with the same key still gets through.
    expect((await openOn(second, '10.2.0.2')).statusCode).toBe(404);
  });
});
