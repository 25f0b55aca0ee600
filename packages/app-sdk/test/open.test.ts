// The SDK against a real API on a real port (PostgreSQL, Redis, DNS for a custom domain): what an
// app gets for the URL it was opened with, and the error class for each way that fails.
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiHarness } from '../../../services/api/test/harness.js';
import { startDnsServer, type DnsServer } from '@deeplink/test-kit/dns-server';
import { freePort } from '@deeplink/test-kit/processes';
import {
  AppSdkError,
  createDeepLinkClient,
  InvalidAppKeyError,
  InvalidRequestError,
  LinkNotFoundError,
  NetworkError,
  RateLimitedError,
} from '../src/index.js';
import { createIosApp, createLink, listeningApi, recordingFetch } from './support.js';

let api: ApiHarness;
let baseUrl: string;
let dns: DnsServer;

beforeAll(async () => {
  dns = await startDnsServer();
  ({ api, baseUrl } = await listeningApi({ DNS_SERVERS: dns.address }));
});
afterAll(async () => {
  await api?.close();
  await dns?.close();
});

describe('open', () => {
  it('resolves a link on the default domain: deep link, minimum version, parameters, id and code', async () => {
    const user = await api.registerUser();
    const app = await createIosApp(api, user.token, 'com.acme.sdkshop');
    const link = await createLink(api, user.token, {
      iosLink: { url: 'acmeshop://product/42', bundleId: 'com.acme.sdkshop', minimumVersion: '2.4' },
      customParameters: { utm_source: 'newsletter' },
    });
    const { fetch, bodies } = recordingFetch();
    const client = createDeepLinkClient({ baseUrl, appKey: app.key, fetch });

    const result = await client.open(`${link.url}?ref=mail`, { firstLaunch: true });
    expect(result).toEqual({
      link: { id: link.id, code: link.code, url: link.url },
      deepLink: 'acmeshop://product/42',
      minimumVersion: '2.4',
      parameters: { utm_source: 'newsletter' },
      webUrl: 'https://shop.example.com/spring?utm_source=newsletter',
    });
    // One request, with a generated UUID as its openId.
    expect(bodies).toEqual([{ url: `${link.url}?ref=mail`, openId: expect.stringMatching(/^[0-9a-f-]{36}$/), firstLaunch: true }]);
    // The installId kept for install() goes with an open when the app passes it (the API counts the install once in the unique re-opens).
    expect((await client.open(link.url, { openId: 'open-with-install', installId: 'install-0001' })).link.id).toBe(link.id);
    expect(bodies[1]).toEqual({ url: link.url, openId: 'open-with-install', installId: 'install-0001' });
  });

  it("resolves a link on the account's custom domain", async () => {
    const user = await api.registerUser();
    const hostname = `sdk${Date.now()}.example.test`;
    const created = await api.request({ method: 'POST', url: '/api/domains', token: user.token, payload: { hostname } });
    const { id, verification } = created.json().data.domain;
    dns.records.set(verification.name, [verification.value]);
    const verified = await api.request({ method: 'POST', url: `/api/domains/${id}/verify`, token: user.token });
    expect(verified.json().data.domain.status).toBe('active');
    const app = await createIosApp(api, user.token);
    const link = await createLink(api, user.token, { domain: hostname, slug: 'offer' });

    const client = createDeepLinkClient({ baseUrl, appKey: app.key });
    const result = await client.open(`https://${hostname}/offer`);
    expect(result.link).toEqual({ id: link.id, code: 'offer', url: link.url });
    expect(result).not.toHaveProperty('deepLink');
    expect(result.parameters).toEqual({});
  });

  it('throws InvalidAppKeyError (401) once the key was rotated, and the new key works', async () => {
    const user = await api.registerUser();
    const app = await createIosApp(api, user.token);
    const link = await createLink(api, user.token);
    const old = createDeepLinkClient({ baseUrl, appKey: app.key });
    expect((await old.open(link.url)).link.id).toBe(link.id);

    const rotated = await api.request({ method: 'POST', url: `/api/apps/${app.id}/key`, token: user.token });
    const error = await old.open(link.url).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidAppKeyError);
    expect(error).toBeInstanceOf(AppSdkError);
    expect(error).toMatchObject({ name: 'InvalidAppKeyError', status: 401, code: 'UNAUTHORIZED' });

    const fresh = createDeepLinkClient({ baseUrl, appKey: rotated.json().data.app.key });
    expect((await fresh.open(link.url)).link.id).toBe(link.id);
  });

  it('throws LinkNotFoundError (404) for a URL with no link of the account', async () => {
    const user = await api.registerUser();
    const app = await createIosApp(api, user.token);
    const client = createDeepLinkClient({ baseUrl, appKey: app.key });
    const origin = new URL(api.env.config.SHORT_URL_BASE).origin;
    for (const url of [`${origin}/no-such-code-${Date.now()}`, `https://unknown-${Date.now()}.example.test/abc`]) {
      const error = await client.open(url).catch((e: unknown) => e);
      expect(error, url).toBeInstanceOf(LinkNotFoundError);
      expect(error).toMatchObject({ status: 404, code: 'NOT_FOUND', message: 'No link of this app at this URL' });
    }
  });

  it('throws InvalidRequestError (400) naming the bad field, without retrying', async () => {
    const user = await api.registerUser();
    const app = await createIosApp(api, user.token);
    const { fetch, bodies } = recordingFetch();
    const client = createDeepLinkClient({ baseUrl, appKey: app.key, fetch });
    const badUrl = await client.open('ftp://example.com/abc').catch((e: unknown) => e);
    expect(badUrl).toBeInstanceOf(InvalidRequestError);
    expect((badUrl as InvalidRequestError).details.map((detail) => detail.field)).toContain('url');
    const badId = await client.open('https://example.com/abc', { openId: 'has spaces' }).catch((e: unknown) => e);
    expect(badId).toMatchObject({ name: 'InvalidRequestError', status: 400, code: 'INVALID_REQUEST' });
    expect((badId as InvalidRequestError).details.map((detail) => detail.field)).toContain('openId');
    expect(bodies).toHaveLength(2);
  });

  it('retries a connection failure with the same openId, and the retry is answered', async () => {
    const user = await api.registerUser();
    const app = await createIosApp(api, user.token);
    const link = await createLink(api, user.token);
    const dead = `http://127.0.0.1:${await freePort()}`;
    // The first attempt goes to a port nothing listens on (a real refused connection), the next to the API.
    const { fetch, bodies } = recordingFetch((url, attemptNo) => (attemptNo === 1 ? url.replace(new URL(baseUrl).origin, dead) : url));
    const client = createDeepLinkClient({ baseUrl, appKey: app.key, fetch });
    const result = await client.open(link.url, { openId: 'open-0001' });
    expect(result.link.id).toBe(link.id);
    expect(bodies).toEqual([
      { url: link.url, openId: 'open-0001' },
      { url: link.url, openId: 'open-0001' },
    ]);
  });

  it('throws NetworkError when nothing listens, after its retries, all with one generated openId', async () => {
    const { fetch, bodies } = recordingFetch();
    const client = createDeepLinkClient({ baseUrl: `http://127.0.0.1:${await freePort()}/api`, appKey: 'dla_x', fetch, retries: 2 });
    const error = await client.open('https://example.com/abc').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toBeInstanceOf(AppSdkError);
    expect(error).toMatchObject({ name: 'NetworkError', code: 'CONNECTION_FAILED', status: undefined });
    expect(bodies).toHaveLength(3);
    expect(new Set(bodies.map((body) => body.openId)).size).toBe(1);
  });

  it('throws NetworkError TIMEOUT when no answer comes in time, retried with the same openId', async () => {
    // A server that accepts connections and never answers: an API stuck behind a proxy.
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => void sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      const { fetch, bodies } = recordingFetch();
      const client = createDeepLinkClient({ baseUrl: `http://127.0.0.1:${port}/api`, appKey: 'dla_x', fetch, timeoutMs: 200, retries: 1 });
      const error = await client.open('https://example.com/abc').catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'NetworkError', code: 'TIMEOUT' });
      expect(bodies).toHaveLength(2);
      expect(bodies[1]).toEqual(bodies[0]);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('throws NetworkError ABORTED, without retrying, when the app aborts', async () => {
    const user = await api.registerUser();
    const app = await createIosApp(api, user.token);
    const { fetch, bodies } = recordingFetch();
    const client = createDeepLinkClient({ baseUrl, appKey: app.key, fetch });
    const error = await client.open('https://example.com/abc', { signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'NetworkError', code: 'ABORTED' });
    expect(bodies).toHaveLength(1);
  });
});

describe('rate limits', () => {
  let limited: Awaited<ReturnType<typeof listeningApi>>;
  beforeAll(async () => {
    // One open per app key per 2-second window: the second open of a window is a 429.
    limited = await listeningApi({ APP_RATE_LIMIT_MAX: '1', RATE_LIMIT_WINDOW_SECONDS: '2' });
  });
  afterAll(() => limited?.api.close());

  it('throws RateLimitedError with retryAfterSeconds when retries are off or the wait is too long', async () => {
    const user = await limited.api.registerUser();
    const app = await createIosApp(limited.api, user.token);
    const link = await createLink(limited.api, user.token);
    await createDeepLinkClient({ baseUrl: limited.baseUrl, appKey: app.key }).open(link.url);

    for (const options of [{ retries: 0 }, { maxRetryAfterSeconds: 0 }]) {
      const { fetch, bodies } = recordingFetch();
      const client = createDeepLinkClient({ baseUrl: limited.baseUrl, appKey: app.key, fetch, ...options });
      const error = await client.open(link.url).catch((e: unknown) => e);
      expect(error, JSON.stringify(options)).toBeInstanceOf(RateLimitedError);
      expect(error).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
      const { retryAfterSeconds } = error as RateLimitedError;
      expect(retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect(retryAfterSeconds).toBeLessThanOrEqual(2);
      expect(bodies).toHaveLength(1);
    }
  });

  it('waits out a short Retry-After and retries with the same openId', async () => {
    const user = await limited.api.registerUser();
    const app = await createIosApp(limited.api, user.token);
    const link = await createLink(limited.api, user.token);
    await createDeepLinkClient({ baseUrl: limited.baseUrl, appKey: app.key }).open(link.url);

    const { fetch, bodies } = recordingFetch();
    const client = createDeepLinkClient({ baseUrl: limited.baseUrl, appKey: app.key, fetch });
    const started = Date.now();
    const result = await client.open(link.url, { firstLaunch: false });
    expect(result.link.id).toBe(link.id);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(bodies.length).toBeGreaterThanOrEqual(2);
    expect(new Set(bodies.map((body) => JSON.stringify(body))).size).toBe(1);
    expect(bodies[0]).toMatchObject({ url: link.url, firstLaunch: false, openId: expect.any(String) });
  });
});
