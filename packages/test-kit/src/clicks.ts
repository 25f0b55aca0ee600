// Clicks for tests: one producer that queues batches the way the redirector does, and the rollup
// queries tests read results with.
import { Queue, type JobsOptions } from 'bullmq';
import { CLICK_BATCH_JOB, CLICK_QUEUE, type ClickBatch, type ClickJobData, packClickBatch } from '@deeplink/core';
import type { Sql } from '@deeplink/core/db';
import type { TestEnvironment } from './environment.js';
import { waitUntil } from './processes.js';

/** A producer for the test's click queue: packs batches as the redirector does. */
export function clickProducer(env: Pick<TestEnvironment, 'redis' | 'config'>) {
  const connection = env.redis.duplicate({ maxRetriesPerRequest: null });
  const queue = new Queue<ClickJobData>(CLICK_QUEUE, { connection, prefix: env.config.QUEUE_PREFIX });
  // Closed before it has connected, the queue reports its interrupted start-up as an 'error'
  // event; with no listener that event would become an unhandled rejection in whichever test runs
  // next. A failing add still rejects its own call.
  queue.on('error', () => {});
  return {
    queue,
    add: (batch: ClickBatch, options: JobsOptions = {}) =>
      queue.add(CLICK_BATCH_JOB, packClickBatch(batch), {
        jobId: batch.batchId,
        attempts: 3,
        backoff: { type: 'fixed', delay: 20 },
        ...options,
      }),
    async close() {
      await queue.close();
      await connection.quit();
    },
  };
}
export type ClickProducer = ReturnType<typeof clickProducer>;

/** Jobs that may still add to the rollups: waiting, running or waiting for a retry. */
export async function pendingJobs(queue: Queue): Promise<number> {
  const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
  return Object.values(counts).reduce((sum, n) => sum + n, 0);
}

/** Resolves once the queue has no pending job (see pendingJobs); usable in hooks too. */
export async function waitForIdle(queue: Queue, timeoutMs = 20_000): Promise<void> {
  await waitUntil(async () => (await pendingJobs(queue)) === 0, timeoutMs, { intervalMs: 10 });
}

/** All clicks of a link in the hourly rollups. */
export async function rolledUpClicks(sql: Sql, linkId: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`SELECT coalesce(sum(clicks), 0)::int AS n FROM click_hourly WHERE link_id = ${linkId}`;
  return row!.n;
}

/** Distinct visitors of a link over all its hours (the merged HyperLogLog sketches, rounded). */
export async function uniqueVisitors(sql: Sql, linkId: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    SELECT coalesce(round(hll_cardinality(hll_union_agg(visitors))), 0)::int AS n FROM click_hourly WHERE link_id = ${linkId}`;
  return row!.n;
}

/** Clicks per value of one dimension (browser, country, …), over all hours. */
export async function dimensionTotals(sql: Sql, linkId: string, name: string): Promise<Record<string, number>> {
  const rows = await sql<{ value: string; n: number }[]>`
    SELECT value, sum(clicks)::int AS n FROM click_hourly_dimensions
    WHERE link_id = ${linkId} AND dimension = ${name} GROUP BY value`;
  return Object.fromEntries(rows.map((r) => [r.value, r.n]));
}
