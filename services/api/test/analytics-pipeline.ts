/// <reference path="../../worker/src/types/ua-parser-js.d.ts" />
// The worker runs in-process here; its declaration for ua-parser-js is outside this project's include.
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { CLICK_BATCH_JOB, CLICK_QUEUE, packClickBatch, type ClickEvent, type PackedClickBatch } from '@deeplink/core';
import type { TestEnvironment } from '../../../test/support/environment.js';
import { BROWSER_AGENTS, UA } from '../../../test/support/user-agents.js';
import { createWorker } from '../../worker/src/app.js';

export { BROWSER_AGENTS };
export const ANDROID_CHROME = UA.androidChrome;
export const GOOGLEBOT = UA.googlebot;

/** A click on `linkId` at `ts` (epoch ms or ISO string), from a desktop Chrome visitor unless overridden. */
export const click = (linkId: string, ts: number | string, overrides: Partial<ClickEvent> = {}): ClickEvent => ({
  linkId,
  ts: typeof ts === 'number' ? ts : Date.parse(ts),
  ip: '8.8.8.8',
  userAgent: BROWSER_AGENTS.Chrome,
  referrer: '',
  ...overrides,
});

const IDLE_STATES = ['waiting', 'active', 'delayed', 'prioritized'] as const;

/**
 * The real click pipeline of a test environment: packed click batch jobs on its BullMQ queue, rolled up
 * into PostgreSQL by the real worker running in-process.
 */
export async function createClickPipeline(env: TestEnvironment) {
  const worker = await createWorker({ config: env.config, sql: env.sql, redis: env.redis, schedule: false });
  const connection = env.redis.duplicate({ maxRetriesPerRequest: null });
  const queue = new Queue<PackedClickBatch>(CLICK_QUEUE, { connection, prefix: env.config.QUEUE_PREFIX });

  return {
    /** Queues the clicks in batches like the redirector does and resolves once the worker has rolled them all up. */
    async send(clicks: ClickEvent[], batchSize = 500): Promise<void> {
      for (let i = 0; i < clicks.length; i += batchSize) {
        const batchId = randomUUID();
        await queue.add(CLICK_BATCH_JOB, packClickBatch({ batchId, clicks: clicks.slice(i, i + batchSize) }), { jobId: batchId });
      }
      const deadline = Date.now() + 20_000;
      for (;;) {
        const counts = await queue.getJobCounts(...IDLE_STATES, 'failed');
        if (counts.failed) throw new Error(`${counts.failed} click batch(es) failed`);
        if (IDLE_STATES.every((state) => counts[state] === 0)) return;
        if (Date.now() > deadline) throw new Error(`click queue not drained: ${JSON.stringify(counts)}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    async close(): Promise<void> {
      await worker.close();
      await queue.close();
      await connection.quit();
    },
  };
}
