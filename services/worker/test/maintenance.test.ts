import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import cron from 'node-cron';
import { UnrecoverableError, Worker } from 'bullmq';
import { loadConfig, MISSING_LINK, packClickBatch, POISON_REASON, redisKeys } from '@deeplink/core';
import {
  appsRepository,
  domainsRepository,
  type LinkRecord,
  linksRepository,
  rollupsRepository,
  toCachedDomain,
  usersRepository,
} from '@deeplink/core/db';
import { cacheDomain, parseCachedLink, reconcileDomainCache, reconcileLinkCache, toCachedLink } from '@deeplink/core/redis';
import { startDnsServer } from '@deeplink/test-kit/dns-server';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { createWorker } from '../src/app.js';
import {
  maintenanceTasks,
  pruneProcessedBatches,
  redisRunCoordinator,
  reportQueue,
  retryDelayMs,
  retryFailedBatches,
} from '../src/maintenance.js';
import { capturingLogger, click, clickProducer, createLinks } from './helpers.js';

describe('maintenance tasks', () => {
  let env: TestEnvironment;
  let keys: ReturnType<typeof redisKeys>;
  let subscriber: Redis;
  const invalidations: string[] = [];

  beforeAll(async () => {
    env = await createTestEnvironment();
    keys = redisKeys(env.config.REDIS_PREFIX);
    subscriber = env.redis.duplicate();
    await subscriber.subscribe(keys.linkInvalidations);
    subscriber.on('message', (_channel, code: string) => invalidations.push(code));
  });
  afterAll(async () => {
    subscriber.disconnect();
    await env.close();
  });

  const cachedValue = async (code: string) => parseCachedLink(await env.redis.get(keys.link(code)));

  describe('reconcileLinkCache', () => {
    it('restores missing and stale links, evicts expired ones and drops records of deleted links', async () => {
      const repo = linksRepository(env.sql);
      const ids = await createLinks(env.sql, 6);
      const links = (await Promise.all(ids.map((id) => repo.findById(id)))) as LinkRecord[];
      const [missing, stale, negative, upToDate, expired, expiredMarker] = links as [LinkRecord, ...LinkRecord[]] & LinkRecord[];
      const past = new Date(Date.now() - 60_000);
      for (const link of [expired!, expiredMarker!]) {
        await repo.update(link.id, { title: link.title, defaultUrl: link.defaultUrl, expirationDate: past });
      }
      await env.redis.set(keys.link(stale!.code), JSON.stringify({ ...toCachedLink(stale!), defaultUrl: 'https://old.example' }));
      await env.redis.set(keys.link(negative!.code), MISSING_LINK);
      await env.redis.set(keys.link(upToDate!.code), JSON.stringify(toCachedLink(upToDate!)));
      await env.redis.set(keys.link(expired!.code), JSON.stringify(toCachedLink(expired!)));
      await env.redis.set(keys.link(expiredMarker!.code), MISSING_LINK);
      // A record for a code PostgreSQL no longer has, and a negative marker for an unknown code.
      await env.redis.set(
        keys.link('gone123'),
        JSON.stringify({ id: '00000000-0000-4000-8000-000000000000', defaultUrl: 'https://gone.example' }),
      );
      await env.redis.set(keys.link('unknown'), MISSING_LINK, 'EX', 60);
      invalidations.length = 0;

      const result = await reconcileLinkCache(env.sql, env.redis, keys);

      expect(result).toEqual({ links: 6, restored: 3, evicted: 1, removed: 1 });
      for (const link of [missing!, stale!, negative!, upToDate!]) expect(await cachedValue(link.code)).toEqual(toCachedLink(link));
      expect(await env.redis.exists(keys.link(expired!.code))).toBe(0);
      expect(await env.redis.get(keys.link(expiredMarker!.code))).toBe(MISSING_LINK);
      expect(await env.redis.exists(keys.link('gone123'))).toBe(0);
      expect(await env.redis.get(keys.link('unknown'))).toBe(MISSING_LINK);
      await expect.poll(() => invalidations.length === 5, { timeout: 20_000 }).toBe(true);
      expect(invalidations.sort()).toEqual([missing!.code, stale!.code, negative!.code, expired!.code, 'gone123'].sort());

      // A second run finds nothing to do.
      expect(await reconcileLinkCache(env.sql, env.redis, keys)).toEqual({ links: 6, restored: 0, evicted: 0, removed: 0 });
    });
  });

  describe('reconcileDomainCache', () => {
    it('writes missing and stale domain records, removes those of domains no longer active, and leaves negative markers', async () => {
      const user = await usersRepository(env.sql).create({ name: 'Domains', email: 'domains@example.com', passwordHash: 'x' });
      const domains = domainsRepository(env.sql);
      const add = async (hostname: string) => (await domains.activate((await domains.create(user!.id, hostname, 't', undefined)).id))!;
      const missing = await add('missing.example.test');
      const stale = await add('stale.example.test');
      await domains.create(user!.id, 'pending.example.test', 't', undefined);
      await appsRepository(env.sql).create(
        user!.id,
        { platform: 'ios', teamId: 'ABCDE12345', bundleId: 'com.example.app' },
        { prefix: 'dla_test', hash: Buffer.alloc(32, 7) },
      );
      // A write the API lost: the record still without the app.
      await cacheDomain(env.redis, keys, stale.hostname, toCachedDomain(stale, []));
      await cacheDomain(env.redis, keys, 'deleted.example.test', { id: '00000000-0000-4000-8000-000000000000', apps: [] });
      await env.redis.set(keys.domain('unknown.example.test'), MISSING_LINK);

      expect(await reconcileDomainCache(env.sql, env.redis, keys)).toEqual({ domains: 2, restored: 2, removed: 1 });
      const expected = { apps: [{ platform: 'ios', teamId: 'ABCDE12345', bundleId: 'com.example.app' }] };
      expect(JSON.parse((await env.redis.get(keys.domain(missing.hostname)))!)).toEqual({ id: missing.id, ...expected });
      expect(JSON.parse((await env.redis.get(keys.domain(stale.hostname)))!)).toEqual({ id: stale.id, ...expected });
      expect(await env.redis.get(keys.domain('deleted.example.test'))).toBeNull();
      expect(await env.redis.get(keys.domain('pending.example.test'))).toBeNull();
      expect(await env.redis.get(keys.domain('unknown.example.test'))).toBe(MISSING_LINK);
      expect(await reconcileDomainCache(env.sql, env.redis, keys)).toEqual({ domains: 2, restored: 0, removed: 0 });
    });
  });

  it('prunes processed batch ids older than the retention', async () => {
    const rollups = rollupsRepository(env.sql);
    await rollups.recordBatch({ batchId: 'prune-old', receivedClicks: 1, clicks: [] });
    await rollups.recordBatch({ batchId: 'prune-new', receivedClicks: 1, clicks: [] });
    await env.sql`UPDATE processed_batches SET processed_at = now() - interval '8 days' WHERE batch_id = 'prune-old'`;
    expect(await pruneProcessedBatches(rollups, 7)).toEqual({ removed: 1 });
    const ids = (await env.sql<{ batch_id: string }[]>`SELECT batch_id FROM processed_batches WHERE batch_id LIKE 'prune-%'`).map(
      (r) => r.batch_id,
    );
    expect(ids).toEqual(['prune-new']);
  });

  it('reports queue depth and failed batches to the log', async () => {
    const producer = clickProducer(env);
    try {
      // One batch that can never succeed (a job of another name), failed by a real worker.
      await producer.queue.add('not-a-click-batch', packClickBatch({ batchId: 'x', clicks: [] }), { jobId: 'report-bad' });
      const app = await createWorker({ config: env.config, sql: env.sql, redis: env.redis, log: capturingLogger().log, schedule: false });
      await expect.poll(async () => (await producer.queue.getFailedCount()) === 1, { timeout: 20_000 }).toBe(true);
      await app.close();

      const [link] = await createLinks(env.sql, 1);
      await producer.add({ batchId: 'report-1', clicks: [click(link!)] });
      await producer.add({ batchId: 'report-2', clicks: [click(link!)] });
      await producer.add({ batchId: 'report-3', clicks: [click(link!)] }, { delay: 60_000 });
      const { log, lines } = capturingLogger();
      expect(await reportQueue(producer.queue, log)).toEqual({ waiting: 2, active: 0, delayed: 1, failed: 1 });
      expect(lines).toEqual([
        expect.objectContaining({ level: 'warn', msg: 'click queue', queue: 'clicks', waiting: 2, active: 0, delayed: 1, failed: 1 }),
      ]);

      await producer.queue.clean(0, 10, 'failed');
      await reportQueue(producer.queue, log);
      expect(lines.at(-1)).toMatchObject({ level: 'info', failed: 0 });
    } finally {
      await producer.queue.obliterate({ force: true });
      await producer.close();
    }
  });

  it('lets one process run each scheduled slot', async () => {
    const a = redisRunCoordinator(env.redis, env.config.REDIS_PREFIX);
    const b = redisRunCoordinator(env.redis.duplicate(), env.config.REDIS_PREFIX);
    expect(await a.shouldRun('report-queue:2026-01-01T00:00:00.000Z', 30_000)).toBe(true);
    expect(await b.shouldRun('report-queue:2026-01-01T00:00:00.000Z', 30_000)).toBe(false);
    expect(await b.shouldRun('report-queue:2026-01-01T00:01:00.000Z', 30_000)).toBe(true);
  });

  it('creates rollup partitions ahead and drops those past the retention, by its clock', async () => {
    let now = new Date('2030-05-03T10:00:00Z');
    const config = loadConfig({ ...env.env, HOURLY_RETENTION_MONTHS: '2', DAILY_RETENTION_MONTHS: '24' });
    const producer = clickProducer(env);
    try {
      const task = maintenanceTasks({
        config,
        sql: env.sql,
        redis: env.redis,
        queue: producer.queue,
        log: capturingLogger().log,
        now: () => now,
      }).find((t) => t.name === 'rollup-partitions')!;
      expect(task.purpose).toMatch(/hourly rollups 2 months, daily 24 months/);
      const first = await task.run();
      expect(first.created).toEqual(
        expect.arrayContaining(['click_hourly_p2030_05', 'click_hourly_p2030_06', 'click_hourly_p2030_07', 'click_daily_p2030']),
      );
      expect(first.created).not.toContain('click_hourly_p2030_08');
      // Four months on, May and June 2030 are more than two whole months back.
      now = new Date('2030-09-01T00:00:00Z');
      const later = await task.run();
      expect(later.created).toEqual(expect.arrayContaining(['click_hourly_p2030_09', 'click_hourly_p2030_10', 'click_hourly_p2030_11']));
      expect(later.dropped).toEqual(
        expect.arrayContaining(['click_hourly_p2030_05', 'click_hourly_p2030_06', 'click_hourly_dimensions_p2030_06']),
      );
      expect(later.dropped).not.toContain('click_hourly_p2030_07');
      expect(later.dropped).not.toContain('click_daily_p2030');
    } finally {
      await producer.close();
    }
  });

  it('schedules the nine tasks from config and removes them on close', async () => {
    const config = loadConfig({
      ...env.env,
      CRON_RECONCILE: '*/7 * * * *',
      CRON_PRUNE_BATCHES: '3 4 * * *',
      CRON_QUEUE_REPORT: '*/2 * * * *',
      CRON_PARTITIONS: '5 6 * * *',
      CRON_RETRY_FAILED: '*/3 * * * *',
      CRON_DOMAIN_CHECK: '*/4 * * * *',
      CRON_PRUNE_INSTALL_CLICKS: '7 8 * * *',
      CRON_PRUNE_WEBHOOK_DELIVERIES: '9 10 * * *',
      CRON_ROLL_COMBINATIONS: '9 * * * *',
    });
    const { log, lines } = capturingLogger();
    const app = await createWorker({ config, sql: env.sql, redis: env.redis, log });
    const registered = () =>
      [...cron.getTasks().values()]
        .filter((task) => app.maintenance!.scheduled.includes(task))
        .map((task) => [task.name, task.getPattern()]);
    try {
      expect(registered().sort()).toEqual([
        ['prune-install-clicks', '7 8 * * *'],
        ['prune-processed-batches', '3 4 * * *'],
        ['prune-webhook-deliveries', '9 10 * * *'],
        ['recheck-domains', '*/4 * * * *'],
        ['reconcile-link-cache', '*/7 * * * *'],
        ['report-queue', '*/2 * * * *'],
        ['retry-failed-batches', '*/3 * * * *'],
        ['roll-combination-days', '9 * * * *'],
        ['rollup-partitions', '5 6 * * *'],
      ]);
      expect(app.tasks.every((task) => task.purpose.length > 0)).toBe(true);
      expect(lines.filter((l) => l.msg === 'maintenance task scheduled')).toHaveLength(9);
    } finally {
      await app.close();
    }
    expect(registered()).toEqual([]);
  });

  it('runs a scheduled task when its slot comes', async () => {
    const [link] = await createLinks(env.sql, 1);
    const code = (await linksRepository(env.sql).findById(link!))!.code;
    await env.redis.del(keys.link(code));
    await env.sql`INSERT INTO processed_batches (batch_id, clicks, processed_at) VALUES ('cron-old', 0, now() - interval '30 days')`;
    // Every second (node-cron's optional seconds field), so the test does not wait a minute.
    const dns = await startDnsServer();
    const config = loadConfig({
      ...env.env,
      DNS_SERVERS: dns.address,
      CRON_RECONCILE: '* * * * * *',
      CRON_PRUNE_BATCHES: '* * * * * *',
      CRON_QUEUE_REPORT: '* * * * * *',
      CRON_PARTITIONS: '* * * * * *',
      CRON_RETRY_FAILED: '* * * * * *',
      CRON_DOMAIN_CHECK: '* * * * * *',
      CRON_PRUNE_INSTALL_CLICKS: '* * * * * *',
      CRON_PRUNE_WEBHOOK_DELIVERIES: '* * * * * *',
    });
    const { log, lines } = capturingLogger();
    const app = await createWorker({ config, sql: env.sql, redis: env.redis, log });
    try {
      await expect.poll(async () => (await env.redis.exists(keys.link(code))) === 1, { timeout: 10_000 }).toBe(true);
      await expect
        .poll(async () => (await env.sql`SELECT 1 FROM processed_batches WHERE batch_id = 'cron-old'`).length === 0, { timeout: 10_000 })
        .toBe(true);
      await expect.poll(() => lines.some((l) => l.msg === 'click queue'), { timeout: 10_000 }).toBe(true);
      const finished = () => new Set(lines.filter((l) => l.msg === 'maintenance task finished').map((l) => l.task));
      await expect.poll(() => finished().size === 8, { timeout: 10_000 }).toBe(true);
      expect(finished()).toEqual(
        new Set([
          'reconcile-link-cache',
          'prune-processed-batches',
          'report-queue',
          'retry-failed-batches',
          'rollup-partitions',
          'recheck-domains',
          'prune-install-clicks',
          'prune-webhook-deliveries',
        ]),
      );
      expect(lines.some((l) => l.level === 'error')).toBe(false);
    } finally {
      await app.close();
      await dns.close();
    }
  });
});

describe('retry-failed-batches', () => {
  let env: TestEnvironment;
  beforeAll(async () => {
    env = await createTestEnvironment();
  });
  afterAll(() => env?.close());

  it('retries failed batches with back-off, leaves poison alone, and fails a batch for good after its retries, hashing its addresses', async () => {
    const producer = clickProducer(env);
    const keys = redisKeys(env.config.REDIS_PREFIX);
    const { log, lines } = capturingLogger();
    let failedForGood = 0;
    const deps = {
      queue: producer.queue,
      redis: env.redis,
      key: keys.failedBatchRetries,
      maxRetries: 2,
      retentionSeconds: 60,
      log,
      onFailedForGood: () => failedForGood++,
    };
    /** Fails every waiting batch as a worker would: poison-x as poison, the others for a transient reason. */
    const failWaiting = async (failed: number) => {
      const worker = new Worker(
        producer.queue.name,
        async (job) => {
          throw job.id === 'poison-x' ? new UnrecoverableError(`${POISON_REASON} test`) : new Error('database unreachable');
        },
        { connection: { url: env.env.REDIS_URL!, maxRetriesPerRequest: null }, prefix: env.config.QUEUE_PREFIX },
      );
      try {
        await expect.poll(async () => (await producer.queue.getFailedCount()) === failed, { timeout: 10_000 }).toBe(true);
      } finally {
        await worker.close();
      }
    };
    try {
      const [link] = await createLinks(env.sql, 1);
      await producer.add({ batchId: 'transient-1', clicks: [click(link!, { ip: '203.0.113.50' })] }, { attempts: 1 });
      await producer.add({ batchId: 'poison-x', clicks: [click(link!)] }, { attempts: 1 });
      await failWaiting(2);
      const failedAt = (await producer.queue.getJob('transient-1'))!.finishedOn!;

      expect(await retryFailedBatches(deps, failedAt + 1_000)).toEqual({ retried: 0, waiting: 1, poison: 1, failedForGood: 0 });
      expect(await retryFailedBatches(deps, failedAt + retryDelayMs(0))).toEqual({ retried: 1, waiting: 0, poison: 1, failedForGood: 0 });
      expect(await producer.queue.getJobState('transient-1')).toBe('waiting');
      await failWaiting(2);
      expect(await retryFailedBatches(deps, Date.now() + retryDelayMs(1))).toMatchObject({ retried: 1 });
      await failWaiting(2);
      expect(await retryFailedBatches(deps, Date.now() + retryDelayMs(2))).toMatchObject({ retried: 0, failedForGood: 1, poison: 1 });

      expect(failedForGood).toBe(1);
      const kept = (await producer.queue.getJob('transient-1'))!;
      expect(JSON.stringify(kept.data)).not.toContain('203.0.113.50');
      expect(JSON.stringify(kept.data)).toContain('sha256:');
      expect(lines.filter((line) => line.level === 'error')).toHaveLength(1);
      expect(await retryFailedBatches(deps, Date.now() + 10 * 3_600_000)).toMatchObject({ retried: 0, failedForGood: 1, poison: 1 });
      expect(failedForGood).toBe(1);
    } finally {
      await producer.queue.obliterate({ force: true });
      await producer.close();
    }
  });
});
