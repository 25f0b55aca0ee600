// The client's retry rules, with an injected fetch answering what each case needs and an injected
// sleep that records the waits instead of waiting. (One end-to-end retry against the real rate
// limiter stays in retries.test.ts.)
import { describe, expect, it } from 'vitest';
import { RateLimitError, type ServiceError } from '../src/errors.js';
import { createTransport, type Request } from '../src/http.js';

const ok = (data: unknown) =>
  new Response(JSON.stringify({ success: true, data }), { status: 200, headers: { 'content-type': 'application/json' } });
const failure = (status: number, code: string, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ success: false, error: { code, message: code, details: [] } }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
const limited = (retryAfter: number) => failure(429, 'RATE_LIMITED', { 'retry-after': String(retryAfter) });

/** A transport whose fetch answers with `answers` in turn, recording each request and each wait. */
function scripted(answers: (() => Response)[], retries = 2) {
  const requests: string[] = [];
  const waits: number[] = [];
  const send = createTransport({
    baseUrl: 'http://api.test/api',
    timeoutMs: 1_000,
    retries,
    credential: () => 'dlk_test',
    fetch: async (_input, init) => {
      requests.push(init?.method ?? 'GET');
      const next = answers.shift();
      if (!next) throw new Error('no more answers scripted');
      return next();
    },
    sleep: async (ms) => void waits.push(ms),
  });
  return { send, requests, waits };
}

const get: Request = { method: 'GET', path: '/links' };

describe('retries', () => {
  it('retry a GET after a 429, waiting out Retry-After (a little more, never less)', async () => {
    const { send, requests, waits } = scripted([() => limited(2), () => ok({ links: [] })]);
    expect(await send(get)).toEqual({ links: [] });
    expect(requests).toEqual(['GET', 'GET']);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThanOrEqual(2_000);
    expect(waits[0]).toBeLessThan(2_250);
  });

  it('with retries: 0 surface the 429 as a RateLimitError carrying retryAfter', async () => {
    const { send, waits } = scripted([() => limited(3)], 0);
    const error = await send(get).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ status: 429, code: 'RATE_LIMITED', retryAfter: 3 });
    expect(waits).toEqual([]);
  });

  it('never retry a POST, even after a 429 that says when to come back', async () => {
    const { send, requests } = scripted([() => limited(1), () => ok({})], 5);
    await expect(send({ method: 'POST', path: '/links', body: {} })).rejects.toBeInstanceOf(RateLimitError);
    expect(requests).toEqual(['POST']);
  });

  it('retry PUT and DELETE like GET', async () => {
    for (const method of ['PUT', 'DELETE'] as const) {
      const { send, requests } = scripted([() => limited(1), () => ok(null)]);
      await send({ method, path: '/links/x' });
      expect(requests).toEqual([method, method]);
    }
  });

  it('do not wait out a Retry-After over a minute: the 429 is thrown at once', async () => {
    const { send, requests, waits } = scripted([() => limited(3_600), () => ok({})], 3);
    const error = (await send(get).catch((e: unknown) => e)) as ServiceError;
    expect(error).toMatchObject({ status: 429, retryAfter: 3_600 });
    expect(requests).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it('back off exponentially with jitter on 502-504 without Retry-After, and give up after `retries`', async () => {
    const { send, requests, waits } = scripted(
      [
        () => failure(502, 'INTERNAL_ERROR'),
        () => failure(503, 'INTERNAL_ERROR'),
        () => failure(504, 'INTERNAL_ERROR'),
        () => failure(503, 'INTERNAL_ERROR'),
      ],
      3,
    );
    await expect(send(get)).rejects.toMatchObject({ status: 503 });
    expect(requests).toHaveLength(4);
    // Equal jitter: between half of and the whole of 500 ms, 1 s, 2 s.
    [500, 1_000, 2_000].forEach((ceiling, i) => {
      expect(waits[i]).toBeGreaterThanOrEqual(ceiling / 2);
      expect(waits[i]).toBeLessThanOrEqual(ceiling);
    });
  });

  it('do not retry a 404 or a 400', async () => {
    const { send, requests } = scripted([() => failure(404, 'NOT_FOUND'), () => ok({})]);
    await expect(send(get)).rejects.toMatchObject({ status: 404 });
    expect(requests).toHaveLength(1);
  });
});
