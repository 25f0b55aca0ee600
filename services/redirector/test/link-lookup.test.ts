import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisKeys } from '@deeplink/core';
import { cacheLink, createRedis, toCachedLink } from '@deeplink/core/redis';
import { createLogger } from '@deeplink/core/runtime';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { createLinkLookup, type LinkLookup } from '../src/link-lookup.js';
import { Metrics } from '../src/metrics.js';
import { createLink, createUser } from './support.js';

// The lookup on its own, over real Redis and PostgreSQL, to see which entry object it keeps.
describe('createLinkLookup refreshes', () => {
  let env: TestEnvironment;
  let subscriber: ReturnType<typeof createRedis>;
  let lookup: LinkLookup;
  let metrics: Metrics;
  let userId: string;
  const keys = () => redisKeys(env.config.REDIS_PREFIX);

  beforeAll(async () => {
    env = await createTestEnvironment();
    subscriber = createRedis(env.config.REDIS_URL);
    metrics = new Metrics({
      bufferedClicks: () => 0,
      lruSize: () => lookup.size(),
      lruBytes: () => 0,
      domainCacheSize: () => 0,
      domainCacheBytes: () => 0,
      spoolBytes: () => 0,
      spooling: () => false,
      native: true,
    });
    lookup = createLinkLookup({
      config: env.config,
      keys: keys(),
      redis: env.redis,
      subscriber,
      sql: env.sql,
      metrics,
      logger: createLogger('redirector', 'silent'),
    });
    userId = await createUser(env.sql);
  });

  afterAll(async () => {
    lookup?.close();
    subscriber?.disconnect();
    await env?.close();
  });

  /** A visit past the entry's time; resolves with what it was answered from, once the refresh it started is done. */
  async function peekAndRefresh(code: string) {
    const answered = lookup.peek(code, Date.now() + 1_000);
    await lookup.load(code); // the refresh in flight (a second load would find the same record)
    return answered;
  }

  it('keeps the entry, and the answers built for it, when Redis holds the same record', async () => {
    const link = await createLink(env.sql, userId, { defaultUrl: 'https://example.com/same' });
    await cacheLink(env.redis, keys(), link);
    const loaded = await lookup.load(link.code);
    loaded.answers.desktop = { kind: 'unavailable' }; // stands for an answer built on a visit

    expect(await peekAndRefresh(link.code)).toBe(loaded);
    const after = lookup.peek(link.code, 0);
    expect(after).toBe(loaded);
    expect(after?.answers.desktop).toEqual({ kind: 'unavailable' });
  });

  it('replaces the entry, answers and all, when the record in Redis changed', async () => {
    const link = await createLink(env.sql, userId, { defaultUrl: 'https://example.com/old' });
    await cacheLink(env.redis, keys(), link);
    const loaded = await lookup.load(link.code);
    loaded.answers.desktop = { kind: 'unavailable' };
    await env.redis.set(keys().link(link.code), JSON.stringify({ ...toCachedLink(link), defaultUrl: 'https://example.com/new' }));

    expect(await peekAndRefresh(link.code)).toBe(loaded); // the visit itself is answered from the old entry
    const after = lookup.peek(link.code, 0);
    expect(after).not.toBe(loaded);
    expect(after?.link?.defaultUrl).toBe('https://example.com/new');
    // Answers are built with the entry: the new record's, not the old one's.
    expect(after?.answers.desktop).toMatchObject({ kind: 'redirect' });
    expect(
      Buffer.from(
        after!.answers.desktop!.kind === 'redirect' ? (after!.answers.desktop!.location as ArrayBuffer) : new ArrayBuffer(0),
      ).toString(),
    ).toBe('https://example.com/new');
  });

  // Time is passed to peek(): a visit "later" is a peek with a later now, no waiting.
  const later = () => Date.now() + 2 * env.config.LINK_CACHE_TTL_MS;

  it("answers every visit past the entry's time from it at once, while one background load refreshes it", async () => {
    const link = await createLink(env.sql, userId, { defaultUrl: 'https://example.com/before' });
    await cacheLink(env.redis, keys(), link);
    const loaded = await lookup.load(link.code);
    // Changed in Redis without an invalidation, as a lost message would leave it.
    await env.redis.set(keys().link(link.code), JSON.stringify({ ...toCachedLink(link), defaultUrl: 'https://example.com/after' }));
    const redisHits = metrics.hits.redis;
    expect(lookup.peek(link.code, Date.now())).toBe(loaded); // still fresh: Redis not asked

    const at = later();
    const answered = Array.from({ length: 20 }, () => lookup.peek(link.code, at));
    expect(new Set(answered)).toEqual(new Set([loaded]));
    await lookup.load(link.code); // the one refresh in flight
    expect(metrics.hits.redis).toBe(redisHits + 1);
    expect(lookup.peek(link.code, Date.now())?.link?.defaultUrl).toBe('https://example.com/after');
  });

  it('keeps answering from the cached record when a refresh fails, and counts the failure', async () => {
    const link = await createLink(env.sql, userId, { defaultUrl: 'https://example.com/kept' });
    await cacheLink(env.redis, keys(), link);
    const loaded = await lookup.load(link.code);
    await env.redis.set(keys().link(link.code), '{not json');
    const failures = metrics.refreshErrors;

    const at = later();
    expect(lookup.peek(link.code, at)).toBe(loaded);
    await expect.poll(() => metrics.refreshErrors).toBe(failures + 1);
    // Retried only after a pause: the same visit time finds the old entry without a new refresh.
    expect(lookup.peek(link.code, at)).toBe(loaded);
    expect(metrics.refreshErrors).toBe(failures + 1);
  });
});
