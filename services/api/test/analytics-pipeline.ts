/// <reference path="../../worker/src/types/ua-parser-js.d.ts" />
// The worker runs in-process here; its declaration for ua-parser-js is outside this project's include.
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { CLICK_BATCH_JOB, CLICK_QUEUE, packClickBatch, type ClickEvent, type PackedClickBatch } from '@deeplink/core';
import type { TestEnvironment } from '../../../test/support/environment.js';
import { createWorker } from '../../worker/src/app.js';

/** Real User-Agent strings, each parsed by the worker into a different browser. */
export const BROWSER_AGENTS = {
  Chrome: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  Firefox: 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
  Safari: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4_1) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Safari/605.1.15',
  'Mobile Safari':
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  Edge: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.80',
  Opera: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 OPR/110.0.0.0',
  'Samsung Internet':
    'Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0.0.0 Mobile Safari/537.36',
  UCBrowser:
    'Mozilla/5.0 (Linux; U; Android 10; en-US; RMX1911 Build/QKQ1.200209.002) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/78.0.3904.108 UCBrowser/13.4.0.1306 Mobile Safari/537.36',
  Yandex: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0.0.0 YaBrowser/24.4.0.0 Safari/537.36',
  Vivaldi: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Vivaldi/6.7.3329.21',
  IE: 'Mozilla/5.0 (Windows NT 10.0; WOW64; Trident/7.0; rv:11.0) like Gecko',
  Whale: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0.0.0 Whale/3.25.232.19 Safari/537.36',
} as const;

export const ANDROID_CHROME =
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36';
export const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

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
