import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, ServiceError, type DeeplinkClient } from '../src/index.js';
import { newAccount, startApiWithEnvironment } from './support/api-process.js';

// A real API whose limiter allows 3 requests per user per 2-second window.
const WINDOW_SECONDS = 2;
let world: Awaited<ReturnType<typeof startApiWithEnvironment>>;
beforeAll(async () => {
  world = await startApiWithEnvironment({ RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS) });
});
afterAll(() => world?.close());

interface Attempt {
  method: string;
  status: number;
  at: number;
  retryAfter: number | undefined;
}

/** A client whose requests (and their answers) are recorded by a wrapping fetch. */
async function recordedClient(retries: number): Promise<{ client: DeeplinkClient; attempts: Attempt[]; token: string }> {
  const attempts: Attempt[] = [];
  const recording: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const retryAfter = response.headers.get('retry-after');
    attempts.push({ method: init?.method ?? 'GET', status: response.status, at: Date.now(), retryAfter: retryAfter ? Number(retryAfter) : undefined });
    return response;
  };
  const client = createClient({ baseUrl: world.api.baseUrl, fetch: recording, retries });
  // register is limited per address, on its own budget, so the user's window starts empty.
  const { token } = await client.auth.register(newAccount());
  attempts.length = 0;
  return { client, attempts, token };
}

/**
 * Waits for the start of a fresh rate-limit window (windows are aligned to multiples of its length)
 * and spends the user's 3 requests in it, so the next request is certain to get a 429.
 */
async function exhaustBudget(token: string): Promise<void> {
  const windowMs = WINDOW_SECONDS * 1000;
  await new Promise((resolve) => setTimeout(resolve, windowMs - (Date.now() % windowMs) + 20));
  const spender = createClient({ baseUrl: world.api.baseUrl, token, retries: 0 });
  for (let i = 0; i < 3; i++) await spender.auth.me();
}

describe('retries against the real rate limiter', () => {
  it('retries a GET after a real 429, waiting out Retry-After', async () => {
    const { client, attempts, token } = await recordedClient(2);
    await exhaustBudget(token);
    const page = await client.links.list();
    expect(page.pagination.total).toBe(0);

    expect(attempts.map((a) => a.status)).toEqual([429, 200]);
    const [limited, retried] = attempts as [Attempt, Attempt];
    expect(limited.retryAfter).toBeGreaterThanOrEqual(1);
    expect(limited.retryAfter).toBeLessThanOrEqual(WINDOW_SECONDS);
    // Honoured: the retry went out no earlier than the server asked (a few ms of timer slack allowed).
    expect(retried.at - limited.at).toBeGreaterThanOrEqual(limited.retryAfter! * 1000 - 20);
  });

  it('with retries: 0 a 429 surfaces as a RateLimitError carrying retryAfter', async () => {
    const { client, attempts, token } = await recordedClient(0);
    await exhaustBudget(token);
    const error = await client.auth.me().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ name: 'RateLimitError', status: 429, code: 'RATE_LIMITED' });
    expect((error as ServiceError).retryAfter).toBeGreaterThanOrEqual(1);
    expect((error as ServiceError).retryAfter).toBeLessThanOrEqual(WINDOW_SECONDS);
    expect(attempts.map((a) => a.status)).toEqual([429]);
  });

  it('never retries a POST, even after a 429 that says when to come back', async () => {
    const { client, attempts, token } = await recordedClient(5);
    await exhaustBudget(token);
    const error = await client.links.create({ title: 'limited', defaultUrl: 'https://example.com' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'RateLimitError', status: 429, code: 'RATE_LIMITED' });
    expect(attempts.map((a) => `${a.method} ${a.status}`)).toEqual(['POST 429']);
  });

  it('PUT and DELETE are retried like GET', async () => {
    const { client, attempts, token } = await recordedClient(2);
    const link = await client.links.create({ title: 'to change', defaultUrl: 'https://example.com' });

    await exhaustBudget(token);
    expect((await client.links.update(link.id, { title: 'changed' })).title).toBe('changed');
    await exhaustBudget(token);
    await client.links.delete(link.id);
    expect(attempts.map((a) => `${a.method} ${a.status}`)).toEqual(['POST 201', 'PUT 429', 'PUT 200', 'DELETE 429', 'DELETE 200']);
  });
});

describe('a Retry-After too long to wait', () => {
  it('is not waited out: the 429 is thrown at once', async () => {
    // Windows are aligned to multiples of their length since the epoch; one of two thirds of the time
    // since 1970 ends a third of that time from now (years), whatever today's date is.
    const windowSeconds = Math.floor(Date.now() / 1000 / 1.5);
    const longWindow = await startApiWithEnvironment({ RATE_LIMIT_MAX: '1', RATE_LIMIT_WINDOW_SECONDS: String(windowSeconds) });
    try {
      let requests = 0;
      const client = createClient({ baseUrl: longWindow.api.baseUrl, retries: 3, fetch: (input, init) => (requests++, fetch(input, init)) });
      await client.auth.register(newAccount());
      requests = 0;
      await client.auth.me();
      const started = Date.now();
      const error = (await client.auth.me().catch((e: unknown) => e)) as ServiceError;
      expect(error).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
      expect(error.retryAfter).toBeGreaterThan(365 * 24 * 3600);
      expect(requests).toBe(2);
      expect(Date.now() - started).toBeLessThan(1000);
    } finally {
      await longWindow.close();
    }
  });
});
