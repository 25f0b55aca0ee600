import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RollupBatch, rollupsRepository } from '@deeplink/core/db';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { createWorker } from '../src/app.js';
import { createRollupWriter } from '../src/rollup-writer.js';
import { capturingLogger, click, clickProducer, createLinks, rolledUpClicks, waitForIdle } from './helpers.js';

const hourStart = Date.UTC(2026, 3, 1, 9);

const batchFor = (batchId: string, linkId: string, clicks: number): RollupBatch => ({
  batchId,
  receivedClicks: clicks,
  clicks: Array.from({ length: clicks }, () => ({
    linkId,
    bucket: hourStart,
    visitor: `${batchId}-visitor`,
    dimensions: { platform: 'ios', country: 'US', browser: 'Mobile Safari', os: 'iOS', device: 'Mobile', referrer: 'direct' },
  })),
});

describe('rollup writer', () => {
  let env: TestEnvironment;

  beforeAll(async () => {
    env = await createTestEnvironment({ WORKER_CONCURRENCY: '8' });
  });
  afterAll(() => env.close());

  /** Holds a lock that blocks every rollup write until the returned function is called. */
  async function blockRollupWrites(): Promise<() => Promise<void>> {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const taken = new Promise<void>((resolve) => (locked = resolve));
    const holder = env.sql.begin(async (tx) => {
      await tx`LOCK TABLE click_hourly IN SHARE ROW EXCLUSIVE MODE`;
      locked();
      await released;
    });
    await taken;
    return async () => {
      release();
      await holder;
    };
  }

  const transactionTimes = async (prefix: string) =>
    Object.fromEntries(
      (
        await env.sql<{ batchId: string; at: Date }[]>`
          SELECT batch_id AS "batchId", processed_at AS at FROM processed_batches WHERE batch_id LIKE ${`${prefix}%`}`
      ).map((row) => [row.batchId, row.at.getTime()]),
    );

  it('writes batches that arrive during a write together in the next transaction', async () => {
    const [link] = await createLinks(env.sql, 1);
    const writer = createRollupWriter(rollupsRepository(env.sql));
    const release = await blockRollupWrites();
    const first = writer.write(batchFor('join-0', link!, 1));
    await expect
      .poll(
        async () =>
          (
            await env.sql`SELECT 1 FROM pg_locks WHERE NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`
          ).length > 0,
        { timeout: 20_000 },
      )
      .toBe(true);
    const rest = [1, 2, 3, 4].map((i) => writer.write(batchFor(`join-${i}`, link!, 10)));
    await release();
    expect(await Promise.all([first, ...rest])).toEqual([true, true, true, true, true]);

    expect(await rolledUpClicks(env.sql, link!)).toBe(41);
    // now() is the transaction's start time: batches written together share it.
    const times = await transactionTimes('join-');
    expect(new Set([1, 2, 3, 4].map((i) => times[`join-${i}`])).size).toBe(1);
    expect(times['join-1']).not.toBe(times['join-0']);
  });

  it('starts transactions at most every minIntervalMs, gathering the batches that arrive meanwhile', async () => {
    const [link] = await createLinks(env.sql, 1);
    const writer = createRollupWriter(rollupsRepository(env.sql), { minIntervalMs: 400 });
    // The first transaction starts at once; the next waits until 400 ms after it started.
    expect(await writer.write(batchFor('paced-0', link!, 1))).toBe(true);
    const later = [1, 2, 3].map((i) => writer.write(batchFor(`paced-${i}`, link!, 10)));
    expect(await Promise.all(later)).toEqual([true, true, true]);

    expect(await rolledUpClicks(env.sql, link!)).toBe(31);
    const times = await transactionTimes('paced-');
    expect(new Set([1, 2, 3].map((i) => times[`paced-${i}`])).size).toBe(1);
    // now() is each transaction's start, as PostgreSQL's clock has it (a few ms off the worker's at most).
    expect(times['paced-1']! - times['paced-0']!).toBeGreaterThanOrEqual(390);
  });

  it('reports a repeated batch id once, as recorded by the first of its copies', async () => {
    const [link] = await createLinks(env.sql, 1);
    const writer = createRollupWriter(rollupsRepository(env.sql));
    const release = await blockRollupWrites();
    const first = writer.write(batchFor('twice-0', link!, 1));
    await expect
      .poll(
        async () =>
          (
            await env.sql`SELECT 1 FROM pg_locks WHERE NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`
          ).length > 0,
        { timeout: 20_000 },
      )
      .toBe(true);
    const copies = [writer.write(batchFor('twice-1', link!, 5)), writer.write(batchFor('twice-1', link!, 5))];
    await release();
    expect(await Promise.all([first, ...copies])).toEqual([true, true, false]);
    expect(await rolledUpClicks(env.sql, link!)).toBe(6);
  });

  it('counts every new batch of a transaction that also holds a batch recorded before (a redelivery)', async () => {
    const [link] = await createLinks(env.sql, 1);
    const writer = createRollupWriter(rollupsRepository(env.sql));
    expect(await writer.write(batchFor('again-0', link!, 7))).toBe(true);
    const release = await blockRollupWrites();
    const first = writer.write(batchFor('again-1', link!, 1));
    await expect
      .poll(
        async () =>
          (
            await env.sql`SELECT 1 FROM pg_locks WHERE NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`
          ).length > 0,
        { timeout: 20_000 },
      )
      .toBe(true);
    // Written together in the next transaction: the batch delivered a second time and three new ones.
    const together = [
      writer.write(batchFor('again-0', link!, 7)),
      ...[2, 3, 4].map((i) => writer.write(batchFor(`again-${i}`, link!, 10))),
    ];
    await release();
    expect(await Promise.all([first, ...together])).toEqual([true, false, true, true, true]);
    expect(await rolledUpClicks(env.sql, link!)).toBe(7 + 1 + 30);
  });

  it('gives up a transaction that waits past its lock timeout, failing its batches together rather than one by one', async () => {
    const [link] = await createLinks(env.sql, 1);
    const rollups = rollupsRepository(env.sql, { timeouts: { idleInTransaction: 5_000, lock: 200, statement: 5_000 } });
    let transactions = 0;
    const writer = createRollupWriter({
      ...rollups,
      recordBatches: (...args) => {
        transactions++;
        return rollups.recordBatches(...args);
      },
    });
    const release = await blockRollupWrites();
    try {
      const first = writer.write(batchFor('timeout-0', link!, 1));
      const rest = [1, 2, 3, 4, 5].map((i) => writer.write(batchFor(`timeout-${i}`, link!, 2)));
      const outcomes = await Promise.allSettled([first, ...rest]);
      expect(outcomes.map((outcome) => outcome.status === 'rejected' && (outcome.reason as { code?: string }).code)).toEqual(
        Array(6).fill('55P03'),
      );
      expect(transactions).toBe(2); // the first batch alone, then the five that came meanwhile, together
    } finally {
      await release();
    }
    expect(await rolledUpClicks(env.sql, link!)).toBe(0);
    expect(await writer.write(batchFor('timeout-1', link!, 2))).toBe(true);
  });

  it('fails only the batch the database rejects when batches were written together', async () => {
    const [good, poisoned] = await createLinks(env.sql, 2);
    await env.sql.unsafe(`
      CREATE FUNCTION reject_link() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.link_id = '${poisoned}' THEN RAISE EXCEPTION 'rejected link'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER reject_link BEFORE INSERT ON click_hourly FOR EACH ROW EXECUTE FUNCTION reject_link();`);
    const producer = clickProducer(env);
    const app = await createWorker({ config: env.config, sql: env.sql, redis: env.redis, log: capturingLogger().log, schedule: false });
    try {
      const release = await blockRollupWrites();
      for (let i = 0; i < 6; i++) await producer.add({ batchId: `poison-${i}`, clicks: [click(good!), click(good!)] }, { attempts: 2 });
      await producer.add({ batchId: 'poison-bad', clicks: [click(good!), click(poisoned!)] }, { attempts: 2 });
      await expect.poll(async () => (await producer.queue.getActiveCount()) === 7, { timeout: 20_000 }).toBe(true);
      await release();
      await waitForIdle(producer.queue);

      expect(await rolledUpClicks(env.sql, good!)).toBe(12);
      const failed = await producer.queue.getFailed();
      expect(failed.map((job) => [job.id, job.attemptsMade])).toEqual([['poison-bad', 2]]);
      const times = await transactionTimes('poison-');
      expect(Object.keys(times).sort()).toEqual([0, 1, 2, 3, 4, 5].map((i) => `poison-${i}`));
    } finally {
      await app.close();
      await producer.queue.obliterate({ force: true });
      await producer.close();
      await env.sql.unsafe('DROP TRIGGER reject_link ON click_hourly; DROP FUNCTION reject_link');
    }
  });
});
