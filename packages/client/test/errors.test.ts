import { once } from 'node:events';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConflictError,
  NotFoundError,
  createClient,
  ServiceAuthError,
  ServiceError,
  ServiceForbiddenError,
  ServiceNetworkError,
  ServiceValidationError,
} from '../src/index.js';
import { newAccount, startApi, startApiWithEnvironment } from './support/api-process.js';

let world: Awaited<ReturnType<typeof startApiWithEnvironment>>;
beforeAll(async () => {
  world = await startApiWithEnvironment();
});
afterAll(() => world?.close());

/** Wraps fetch to count the requests a client sends. */
function countingFetch() {
  const calls: string[] = [];
  const wrapped: typeof fetch = (input, init) => {
    calls.push(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname}`);
    return fetch(input, init);
  };
  return { calls, fetch: wrapped };
}

describe('errors from API answers', () => {
  it('bad credentials: ServiceAuthError with status and code', async () => {
    const client = createClient({ baseUrl: world.api.baseUrl });
    const account = newAccount();
    await client.auth.register(account);
    const error = await client.auth.login({ email: account.email, password: 'not the password' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceAuthError);
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ name: 'ServiceAuthError', status: 401, code: 'UNAUTHORIZED', message: 'Email or password is incorrect' });
    expect(error).not.toBeInstanceOf(ServiceForbiddenError);

    const invalidKey = createClient({ baseUrl: world.api.baseUrl, apiKey: 'not-a-real-key' });
    await expect(invalidKey.links.list()).rejects.toMatchObject({ name: 'ServiceAuthError', status: 401 });
  });

  it('invalid body: ServiceValidationError carrying per-field details', async () => {
    const client = createClient({ baseUrl: world.api.baseUrl });
    await client.auth.register(newAccount());
    const error = await client.links
      .create({ title: '', defaultUrl: 'javascript:alert(1)', androidLink: { url: 'myapp://x', appPackageName: 'nope' } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceValidationError);
    expect(error).toMatchObject({ name: 'ServiceValidationError', status: 400, code: 'INVALID_REQUEST' });
    const fields = (error as ServiceValidationError).details.map((d) => d.field).sort();
    expect(fields).toEqual(['androidLink.appPackageName', 'defaultUrl', 'title']);
    for (const detail of (error as ServiceValidationError).details) expect(detail.message).toEqual(expect.any(String));
  });

  it('an email registered twice is a ConflictError, which is a validation error (409)', async () => {
    const account = newAccount();
    await createClient({ baseUrl: world.api.baseUrl }).auth.register(account);
    const error = await createClient({ baseUrl: world.api.baseUrl })
      .auth.register(account)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toBeInstanceOf(ServiceValidationError);
    expect(error).toMatchObject({ name: 'ConflictError', status: 409, code: 'INVALID_REQUEST' });
  });

  it('a body over 1 MiB is a validation error (413)', async () => {
    const client = createClient({ baseUrl: world.api.baseUrl });
    await client.auth.register(newAccount());
    const error = await client.links.create({ title: 'x'.repeat(1_100_000), defaultUrl: 'https://example.com' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceValidationError);
    expect(error).toMatchObject({ status: 413 });
  });

  it('an unknown link: NotFoundError (a ServiceError) 404, not retried', async () => {
    const counter = countingFetch();
    const client = createClient({ baseUrl: world.api.baseUrl, fetch: counter.fetch });
    await client.auth.register(newAccount());
    counter.calls.length = 0;
    const error = await client.links.get('00000000-0000-0000-0000-000000000000').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).not.toBeInstanceOf(ServiceAuthError);
    expect(error).not.toBeInstanceOf(ServiceValidationError);
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ name: 'NotFoundError', status: 404, code: 'NOT_FOUND', details: [] });
    expect(counter.calls).toHaveLength(1);
  });
});

describe('network failures', () => {
  it('the API process killed mid-test: ServiceNetworkError; GET retried, POST not', async () => {
    const api = await startApi(world.environment.env);
    const counter = countingFetch();
    const client = createClient({ baseUrl: api.baseUrl, fetch: counter.fetch, retries: 2 });
    try {
      await client.auth.register(newAccount());
      expect(await client.links.list()).toMatchObject({ links: [] });
    } finally {
      await api.kill();
    }

    counter.calls.length = 0;
    const error = await client.links.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceNetworkError);
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ name: 'ServiceNetworkError', code: 'CONNECTION_FAILED', status: undefined });
    expect((error as Error).message).toContain('ECONNREFUSED');
    expect(counter.calls).toEqual(['GET /api/links', 'GET /api/links', 'GET /api/links']);

    counter.calls.length = 0;
    await expect(client.links.create({ title: 't', defaultUrl: 'https://example.com' })).rejects.toBeInstanceOf(ServiceNetworkError);
    expect(counter.calls).toEqual(['POST /api/links']);
  });

  describe('a server that accepts connections and never answers', () => {
    let server: Server;
    let baseUrl: string;
    const sockets = new Set<Socket>();
    let requests = 0;
    beforeAll(async () => {
      server = createServer((socket) => {
        // Counts requests, not connections: undici may open a spare connection after an abort.
        socket.on('data', (chunk) => (requests += String(chunk).match(/^(GET|POST|PUT|DELETE) /gm)?.length ?? 0));
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => {});
      }).listen(0, '127.0.0.1');
      await once(server, 'listening');
      baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
    });
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    });

    it('times out with ServiceNetworkError TIMEOUT, retrying a GET', async () => {
      requests = 0;
      const client = createClient({ baseUrl, timeoutMs: 200, retries: 1 });
      const started = Date.now();
      const error = await client.auth.me().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ServiceNetworkError);
      expect(error).toMatchObject({ name: 'ServiceNetworkError', code: 'TIMEOUT' });
      expect(requests).toBe(2);
      expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    });

    it('never retries a timed-out POST (it may have been applied)', async () => {
      requests = 0;
      const client = createClient({ baseUrl, timeoutMs: 200, retries: 3 });
      await expect(client.links.create({ title: 't', defaultUrl: 'https://example.com' })).rejects.toMatchObject({ code: 'TIMEOUT' });
      expect(requests).toBe(1);
    });

    it('a per-call timeout overrides the client one', async () => {
      const client = createClient({ baseUrl, timeoutMs: 60_000, retries: 0 });
      const started = Date.now();
      await expect(client.links.list({}, { timeoutMs: 100 })).rejects.toMatchObject({ code: 'TIMEOUT' });
      expect(Date.now() - started).toBeLessThan(5_000);
    });

    it("the caller's signal aborts with ServiceNetworkError ABORTED and is not retried", async () => {
      requests = 0;
      const client = createClient({ baseUrl, timeoutMs: 60_000, retries: 3 });
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      const error = await client.links.list({}, { signal: controller.signal }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ServiceNetworkError);
      expect(error).toMatchObject({ code: 'ABORTED' });
      expect(requests).toBe(1);
    });
  });

  it('a reply that is not the envelope (a proxy in front): ServiceNetworkError INVALID_RESPONSE, a 502 retried', async () => {
    const replies: [number, string][] = [
      [502, '<html>Bad Gateway</html>'],
      [200, '<html>Sign in to the Wi-Fi</html>'],
    ];
    let requests = 0;
    const proxy = createHttpServer((_request, response) => {
      requests++;
      const [status, body] = replies[0]!;
      response.writeHead(status, { 'content-type': 'text/html' }).end(body);
    }).listen(0, '127.0.0.1');
    await once(proxy, 'listening');
    try {
      const client = createClient({ baseUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/api`, retries: 1 });
      const badGateway = await client.links.list().catch((e: unknown) => e);
      expect(badGateway).toBeInstanceOf(ServiceNetworkError);
      expect(badGateway).toMatchObject({ code: 'INVALID_RESPONSE', status: 502 });
      expect(requests).toBe(2);

      replies.shift();
      requests = 0;
      await expect(client.links.list()).rejects.toMatchObject({ name: 'ServiceNetworkError', code: 'INVALID_RESPONSE', status: 200 });
      expect(requests).toBe(1);
    } finally {
      proxy.close();
    }
  });

  it('an address nobody listens on: ServiceNetworkError CONNECTION_FAILED', async () => {
    const client = createClient({ baseUrl: 'http://127.0.0.1:1/api', retries: 0 });
    await expect(client.auth.me()).rejects.toMatchObject({ name: 'ServiceNetworkError', code: 'CONNECTION_FAILED' });
  });

  it('a host name that does not resolve: ServiceNetworkError CONNECTION_FAILED', async () => {
    const client = createClient({ baseUrl: 'http://no-such-host.invalid/api', retries: 0 });
    await expect(client.auth.me()).rejects.toMatchObject({ name: 'ServiceNetworkError', code: 'CONNECTION_FAILED' });
  });
});
