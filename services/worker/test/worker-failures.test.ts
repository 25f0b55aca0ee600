import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLICK_BATCH_JOB, loadConfig, packClickBatch, type PackedClickBatch, readClickJob } from '@deeplink/core';
import { createDatabase } from '@deeplink/core/db';
import { holdTableLock } from '@deeplink/test-kit/table-lock';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { createWorker } from '../src/app.js';
import { capturingLogger, click, clickProducer, createLinks, rolledUpClicks, waitForIdle, type ClickProducer } from './helpers.js';

describe('click batch worker under failure', () => {
  let env: TestEnvironment;
  let producer: ClickProducer;

  beforeAll(async () => {
    env = await createTestEnvironment({ WORKER_CONCURRENCY: '4' });
    producer = clickProducer(env);
  });
  afterAll(async () => {
    await producer.close();
    await env.close();
  });

  it('fails a job whose data is not a click batch at once, without retries', async () => {
    const [link] = await createLinks(env.sql, 1);
    const app = await createWorker({ config: env.config, sql: env.sql, redis: env.redis, log: capturingLogger().log, schedule: false });
    try {
      const packed = packClickBatch({ batchId: 'corrupt-1', clicks: [click(link!)] });
      // A string index past the end of the batch's string table.
      const corrupt: PackedClickBatch = { ...packed, clicks: [0, 0, 0, 0, 42] };
      await producer.queue.add(CLICK_BATCH_JOB, corrupt, { jobId: packed.batchId, attempts: 5 });
      await waitForIdle(producer.queue);
      const [failed] = await producer.queue.getFailed();
      expect(failed?.id).toBe('corrupt-1');
      expect(failed?.attemptsMade).toBe(1);
      expect(failed?.failedReason).toBe('poison: job data is not a whole "packed-2" click batch');
      expect(await rolledUpClicks(env.sql, link!)).toBe(0);
      await failed!.remove();
    } finally {
      await app.close();
    }
  });

  it('retries a batch the database rejects and leaves it in the failed set when attempts run out', async () => {
    const [link] = await createLinks(env.sql, 1);
    const missing = new URL(env.config.DATABASE_URL);
    missing.pathname = '/deeplink_database_that_does_not_exist';
    const brokenSql = createDatabase(missing.toString(), { max: 2 });
    const { log, lines } = capturingLogger();
    const app = await createWorker({ config: env.config, sql: brokenSql, redis: env.redis, log, schedule: false });
    try {
      await producer.add({ batchId: 'doomed-1', clicks: [click(link!), click(link!)] }, { attempts: 3 });
      await waitForIdle(producer.queue);
      const [failed] = await producer.queue.getFailed();
      expect(failed?.id).toBe('doomed-1');
      expect(failed?.attemptsMade).toBe(3);
      expect(failed?.failedReason).toMatch(/does not exist/);
      expect(readClickJob(failed?.data)?.clicks).toHaveLength(2);
      expect(lines.filter((l) => l.msg === 'batch attempt failed, will retry')).toHaveLength(2);
      expect(lines.filter((l) => l.msg === 'batch failed; the retry-failed-batches task tries it again')).toHaveLength(1);
    } finally {
      await app.close();
      await brokenSql.end();
    }

    // Nothing was written; retrying the failed job against a working database counts it once.
    expect(await rolledUpClicks(env.sql, link!)).toBe(0);
    const healthy = await createWorker({ config: env.config, sql: env.sql, redis: env.redis, log: capturingLogger().log, schedule: false });
    try {
      await (await producer.queue.getJob('doomed-1'))!.retry();
      await waitForIdle(producer.queue);
      expect(await rolledUpClicks(env.sql, link!)).toBe(2);
      expect(await producer.queue.getFailedCount()).toBe(0);
    } finally {
      await healthy.close();
    }
  });

  it('finishes the batches in flight on close and leaves the rest queued, losing none', async () => {
    const [link] = await createLinks(env.sql, 1);
    const jobs = 40;
    const perJob = 50;
    for (let i = 0; i < jobs; i++) {
      await producer.add({
        batchId: `close-${i}`,
        clicks: Array.from({ length: perJob }, (_, n) => click(link!, { ip: `8.8.${i}.${n}` })),
      });
    }

    // Hold every rollup write behind a table lock so batches are provably mid-transaction at close.
    const lock = await holdTableLock(env.sql, 'click_hourly');

    const app = await createWorker({ config: env.config, sql: env.sql, redis: env.redis, log: capturingLogger().log, schedule: false });
    await expect
      .poll(async () => (await producer.queue.getActiveCount()) === env.config.WORKER_CONCURRENCY, { timeout: 20_000 })
      .toBe(true);
    const closing = app.close();
    let closed = false;
    void closing.then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(closed).toBe(false); // close waits for the batches in flight
    await lock.release();
    await closing;

    const processed = async () =>
      (await env.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM processed_batches WHERE batch_id LIKE 'close-%'`)[0]!.n;
    const done = await processed();
    expect(done).toBeGreaterThanOrEqual(env.config.WORKER_CONCURRENCY);
    expect(await producer.queue.getActiveCount()).toBe(0);
    expect(await producer.queue.getWaitingCount()).toBe(jobs - done);
    expect(await rolledUpClicks(env.sql, link!)).toBe(done * perJob);

    const next = await createWorker({ config: env.config, sql: env.sql, redis: env.redis, log: capturingLogger().log, schedule: false });
    try {
      await waitForIdle(producer.queue);
    } finally {
      await next.close();
    }
    expect(await processed()).toBe(jobs);
    expect(await rolledUpClicks(env.sql, link!)).toBe(jobs * perJob);
    expect(await producer.queue.getFailedCount()).toBe(0);
  });

  it('refuses an invalid cron schedule, naming the variable', async () => {
    const config = loadConfig({ ...env.env, CRON_PRUNE_BATCHES: 'every day' });
    await expect(createWorker({ config, sql: env.sql, redis: env.redis, log: capturingLogger().log })).rejects.toThrow(
      /CRON_PRUNE_BATCHES: invalid cron expression/,
    );
  });
});
