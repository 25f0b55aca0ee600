import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type DeeplinkClient } from '../src/index.js';
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
    attempts.push({
      method: init?.method ?? 'GET',
      status: response.status,
      at: Date.now(),
      retryAfter: retryAfter ? Number(retryAfter) : undefined,
    });
    return response;
  };
  const client = createClient({ baseUrl: world.api.baseUrl, fetch: recording, retries });
  // register is limited per address, on its own budget, so the user's window starts empty.
  const { token } = await client.auth.register(newAccount());
  attempts.length = 0;
  return { client, attempts, token };
}

/**
 * Spends the user's 3 requests (their window starts with the first), so the next request is
 * certain to get a 429.
 */
async function exhaustBudget(token: string): Promise<void> {
  const spender = createClient({ baseUrl: world.api.baseUrl, token, retries: 0 });
  for (let i = 0; i < 3; i++) await spender.auth.me();
}

// The retry rules case by case, with an injected fetch and sleep: retry-logic.test.ts. Here, one
// end-to-end retry against the real rate limiter.
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
});
