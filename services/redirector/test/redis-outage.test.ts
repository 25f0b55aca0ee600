import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisKeys } from '@deeplink/core';
import { type LinkRecord, linksRepository } from '@deeplink/core/db';
import { cacheLink } from '@deeplink/core/redis';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { startPrivateRedis, type PrivateRedis } from '@deeplink/test-kit/private-redis';
import { clickQueue, createLink, createUser, metric, queuedClicks, startRedirector, visit, type RedirectorProcess } from './support.js';

describe('redirector while its Redis is down', () => {
  let redisServer: PrivateRedis;
  let env: TestEnvironment;
  let redirector: RedirectorProcess;
  let cached: LinkRecord;
  let uncached: LinkRecord;

  beforeAll(async () => {
    redisServer = await startPrivateRedis();
    env = await createTestEnvironment({
      REDIS_URL: redisServer.url,
      LINK_CACHE_TTL_MS: '600000',
      CLICK_BUFFER_MAX: '5',
      // A spool that takes nothing: memory is all there is (the spool itself: click-spool.test.ts, test/faults).
      CLICK_SPOOL_MAX_BYTES: '1',
      CLICK_SPOOL_DIR: mkdtempSync(join(tmpdir(), 'deeplink-spool-')),
    });
    // This test's own connection sees the outage too; it reconnects by itself.
    env.redis.on('error', () => {});
    const userId = await createUser(env.sql);
    cached = await createLink(env.sql, userId, { defaultUrl: 'https://example.com/cached' });
    uncached = await createLink(env.sql, userId, { defaultUrl: 'https://example.com/uncached' });
    await cacheLink(env.redis, redisKeys(env.config.REDIS_PREFIX), cached);
    redirector = await startRedirector(env.env);
  });

  afterAll(async () => {
    expect(await redirector?.stop()).toBe(0);
    await env?.close();
    await redisServer?.kill();
  });

  it('keeps redirecting, bounds the click buffer, and flushes the backlog when Redis returns', async () => {
    const go = (code: string, referer: string) => visit(`${redirector.url}/${code}`, { referer });
    expect((await go(cached.code, 'warm-up')).headers.get('location')).toBe('https://example.com/cached');
    await expect
      .poll(async () => (await metric(redirector.metricsUrl, 'redirector_clicks_flushed_total')) === 1, { timeout: 5_000 })
      .toBe(true);

    await redisServer.kill();
    // Still ready: PostgreSQL and the in-process cache answer visitors; the detail says Redis is down.
    await expect
      .poll(
        async () => ((await (await visit(`${redirector.metricsUrl}/readyz`)).json()) as { checks: Record<string, string> }).checks.redis,
        { timeout: 5_000 },
      )
      .toBe('down');
    const ready = await visit(`${redirector.metricsUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      status: 'ok',
      checks: { redis: 'down', postgres: 'ok', accepting: 'ok', spool: 'ok' },
      detail: { spoolBytes: 0, cachedLinks: 1 },
    });
    expect((await visit(`${redirector.url}/readyz`)).status).toBe(200);

    // From the LRU, and from PostgreSQL for a link this process has not seen yet.
    const outage: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await go(cached.code, `outage-${i}`);
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe('https://example.com/cached');
      outage.push(`outage-${i}`);
    }
    const fromDb = await go(uncached.code, 'outage-db');
    expect(fromDb.status).toBe(302);
    expect(fromDb.headers.get('location')).toBe('https://example.com/uncached');

    // Five clicks held (CLICK_BUFFER_MAX; the spool takes none), the other four dropped and counted.
    expect(await metric(redirector.metricsUrl, 'redirector_click_buffer_size')).toBe(5);
    expect(await metric(redirector.metricsUrl, 'redirector_clicks_dropped_total')).toBe(4);
    await expect
      .poll(async () => (await metric(redirector.metricsUrl, 'redirector_queue_flush_errors_total')) > 0, { timeout: 5_000 })
      .toBe(true);
    expect(redirector.output.some((line) => line.includes('click buffer and spool full'))).toBe(true);

    // Same port, empty memory: the warm-up job is gone, so the queue holds exactly the backlog.
    await redisServer.restart();
    const queue = clickQueue(redisServer.url, env.config.QUEUE_PREFIX);
    try {
      await expect.poll(async () => (await queuedClicks(queue)).length, { timeout: 15_000 }).toBeGreaterThanOrEqual(5);
      const clicks = await queuedClicks(queue);
      expect(clicks.map((c) => c.referrer).sort()).toEqual(outage.slice(0, 5).sort());
    } finally {
      await queue.close();
    }
    expect(await metric(redirector.metricsUrl, 'redirector_click_buffer_size')).toBe(0);
    await expect.poll(async () => (await visit(`${redirector.url}/readyz`)).status === 200, { timeout: 10_000 }).toBe(true);
  });

  it('listens for invalidations again after Redis returns', async () => {
    const keys = redisKeys(env.config.REDIS_PREFIX);
    const updated = await linksRepository(env.sql).update(cached.id, { title: 't', defaultUrl: 'https://example.com/after' });
    // The subscription comes back with the connection; publish until this process has it.
    await expect
      .poll(
        async () => {
          await cacheLink(env.redis, keys, updated!);
          return (await visit(`${redirector.url}/${cached.code}`)).headers.get('location') === 'https://example.com/after';
        },
        { timeout: 10_000 },
      )
      .toBe(true);
  });
});
