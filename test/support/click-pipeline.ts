/// <reference path="../../services/worker/src/types/ua-parser-js.d.ts" />
// The worker runs in-process here; its declaration for ua-parser-js is outside the test project's include.
import { randomUUID } from 'node:crypto';
import type { ClickEvent } from '@deeplink/core';
import { createWorker } from '../../services/worker/src/app.js';
import { clickProducer, waitForIdle } from './clicks.js';
import type { TestEnvironment } from './environment.js';

/**
 * The real click pipeline of a test environment without HTTP: packed click batch jobs on its
 * BullMQ queue, rolled up into PostgreSQL by the real worker running in-process. For tests of
 * what reads the rollups (the API's analytics); test/pipeline.test.ts runs the whole stack.
 */
export async function createClickPipeline(env: TestEnvironment) {
  const worker = await createWorker({ config: env.config, sql: env.sql, redis: env.redis, schedule: false });
  const producer = clickProducer(env);

  return {
    /** Queues the clicks in batches like the redirector does and resolves once the worker has rolled them all up. */
    async send(clicks: ClickEvent[], batchSize = 500): Promise<void> {
      for (let i = 0; i < clicks.length; i += batchSize) await producer.add({ batchId: randomUUID(), clicks: clicks.slice(i, i + batchSize) }, { attempts: 1 });
      await waitForIdle(producer.queue);
      const failed = await producer.queue.getFailedCount();
      if (failed) throw new Error(`${failed} click batch(es) failed`);
    },
    async close(): Promise<void> {
      await worker.close();
      await producer.close();
    },
  };
}
