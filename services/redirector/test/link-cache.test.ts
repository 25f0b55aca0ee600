import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MISSING_LINK, redisKeys } from '@deeplink/core';
import { linksRepository } from '@deeplink/core/db';
import { cacheLink, toCachedLink, uncacheLink } from '@deeplink/core/redis';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { createLink, createUser, metric, newCode, startRedirector, visit, type RedirectorProcess } from './support.js';

describe('link lookup: LRU, Redis, PostgreSQL', () => {
  let env: TestEnvironment;
  let redirector: RedirectorProcess;
  let userId: string;
  const keys = () => redisKeys(env.config.REDIS_PREFIX);
  const location = async (code: string) => {
    const res = await visit(`${redirector.url}/${code}`);
    return res.status === 302 ? res.headers.get('location') : res.status;
  };
  const counter = (layer: string, kind: 'hits' | 'misses') =>
    metric(redirector.metricsUrl, `redirector_link_cache_${kind}_total`, `layer="${layer}"`);

  beforeAll(async () => {
    // A long LRU TTL, so only invalidation messages can explain a change being seen.
    env = await createTestEnvironment({ LINK_CACHE_TTL_MS: '600000' });
    userId = await createUser(env.sql);
    redirector = await startRedirector(env.env);
  });

  afterAll(async () => {
    expect(await redirector?.stop()).toBe(0);
    await env?.close();
  });

  it('sees an update written through to Redis within a second', async () => {
    const link = await createLink(env.sql, userId, { defaultUrl: 'https://example.com/v1' });
    await cacheLink(env.redis, keys(), link);
    expect(await location(link.code)).toBe('https://example.com/v1');
    expect(await location(link.code)).toBe('https://example.com/v1'); // now from the LRU

    const updated = await linksRepository(env.sql).update(link.id, { title: 'x', defaultUrl: 'https://example.com/v2' });
    await cacheLink(env.redis, keys(), updated!);
    await expect.poll(async () => (await location(link.code)) === 'https://example.com/v2', { timeout: 1_000 }).toBe(true);
  });

  it('sees a delete within a second', async () => {
    const link = await createLink(env.sql, userId);
    await cacheLink(env.redis, keys(), link);
    expect(await location(link.code)).toBe('https://example.com/default');

    await linksRepository(env.sql).delete(link.id);
    await uncacheLink(env.redis, keys(), link.code);
    await expect.poll(async () => (await location(link.code)) === 404, { timeout: 1_000 }).toBe(true);
  });

  it('serves a new link at a code it had cached as unknown', async () => {
    const code = newCode();
    expect(await location(code)).toBe(404);
    // The negative marker is written after the answer, off the response path.
    await expect.poll(async () => (await env.redis.get(keys().link(code))) === MISSING_LINK, { timeout: 5_000 }).toBe(true);
    expect(await location(code)).toBe(404);

    const link = await createLink(env.sql, userId, { defaultUrl: 'https://example.com/fresh' }, code);
    await cacheLink(env.redis, keys(), link);
    await expect.poll(async () => (await location(code)) === 'https://example.com/fresh', { timeout: 1_000 }).toBe(true);
  });

  it('falls back to PostgreSQL when Redis lacks the link, and refills Redis', async () => {
    const link = await createLink(env.sql, userId, {
      defaultUrl: 'https://example.com/db',
      iosLink: { url: 'app://x', bundleId: 'com.example.app' },
      customParameters: { a: '1' },
    });
    await cacheLink(env.redis, keys(), link);
    await env.redis.del(keys().link(link.code)); // as if Redis had been flushed
    const dbHits = await counter('db', 'hits');

    expect(await location(link.code)).toBe('https://example.com/db?a=1');
    expect(await counter('db', 'hits')).toBe(dbHits + 1);
    await expect.poll(() => env.redis.get(keys().link(link.code)), { timeout: 5_000 }).not.toBeNull();
    const refilled = (await env.redis.get(keys().link(link.code)))!;
    expect(JSON.parse(refilled)).toEqual(toCachedLink(link));
  });

  it('queries PostgreSQL once per unknown code, and the negative cache is shared through Redis', async () => {
    const codes = Array.from({ length: 20 }, () => randomBytes(5).toString('hex'));
    const misses = await counter('db', 'misses');
    for (let round = 0; round < 3; round++) {
      const statuses = await Promise.all(codes.map(location));
      expect(statuses.every((s) => s === 404)).toBe(true);
    }
    expect(await counter('db', 'misses')).toBe(misses + codes.length);
    for (const code of codes) {
      await expect.poll(async () => (await env.redis.get(keys().link(code))) === MISSING_LINK, { timeout: 5_000 }).toBe(true);
      const ttl = await env.redis.ttl(keys().link(code));
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(env.config.NEGATIVE_CACHE_TTL_SECONDS);
    }

    // A second instance (empty LRU) answers them from Redis without touching PostgreSQL.
    const second = await startRedirector(env.env);
    try {
      const statuses = await Promise.all(codes.map((code) => visit(`${second.url}/${code}`).then((r) => r.status)));
      expect(statuses.every((s) => s === 404)).toBe(true);
      expect(await metric(second.metricsUrl, 'redirector_link_cache_hits_total', 'layer="redis"')).toBe(codes.length);
      expect(await metric(second.metricsUrl, 'redirector_link_cache_misses_total', 'layer="db"')).toBe(0);
    } finally {
      expect(await second.stop()).toBe(0);
    }
  });

  it('coalesces concurrent misses for one code into a single database query', async () => {
    const link = await createLink(env.sql, userId, { defaultUrl: 'https://example.com/popular' });
    const dbHits = await counter('db', 'hits');
    const lruMisses = await counter('lru', 'misses');
    const visits = 30;
    let pending: Promise<(string | number | null)[]> | undefined;
    // Hold the table so the first query waits until every request has arrived.
    await env.sql.begin(async (tx) => {
      await tx`LOCK TABLE links IN ACCESS EXCLUSIVE MODE`;
      pending = Promise.all(Array.from({ length: visits }, () => location(link.code)));
      await expect.poll(async () => (await counter('lru', 'misses')) >= lruMisses + visits, { timeout: 5_000 }).toBe(true);
    });
    const results = await pending!;
    expect(new Set(results)).toEqual(new Set(['https://example.com/popular']));
    expect(await counter('db', 'hits')).toBe(dbHits + 1);
  });
});
