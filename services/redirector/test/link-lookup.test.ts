import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedis } from '@deeplink/core/redis/client';
import { redisKeys } from '@deeplink/core/redis/keys';
import { cacheLink, toCachedLink } from '@deeplink/core/redis/link-cache';
import { createTestEnvironment, type TestEnvironment } from '../../../test/support/environment.js';
import { createLinkLookup, type LinkLookup } from '../src/link-lookup.js';
import { createLogger } from '@deeplink/core/runtime/logger';
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
    metrics = new Metrics({ bufferedClicks: () => 0, lruSize: () => lookup.size(), lruBytes: () => 0, spoolBytes: () => 0, native: true });
    lookup = createLinkLookup({ config: env.config, keys: keys(), redis: env.redis, subscriber, sql: env.sql, metrics, logger: createLogger('redirector', 'silent') });
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
    expect(Buffer.from(after!.answers.desktop!.kind === 'redirect' ? (after!.answers.desktop!.location as ArrayBuffer) : new ArrayBuffer(0)).toString()).toBe('https://example.com/new');
  });
});
