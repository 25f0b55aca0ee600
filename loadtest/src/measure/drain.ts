import { CLICK_QUEUE } from '@deeplink/core';
import { createRedis } from '@deeplink/core/redis';
import { Queue } from 'bullmq';

/**
 * The value of one sample in a Prometheus text exposition: the series called `name` whose labels
 * include every `key="value"` of `labels` (comma-separated), whatever other labels it has (such as
 * `service`). Undefined when there is none.
 */
export function metricValue(text: string, name: string, labels = ''): number | undefined {
  const wanted = labels ? labels.split(',') : [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = new Set((match[2] ?? '').split(',').filter(Boolean));
    if (wanted.every((label) => have.has(label))) return Number(match[3]);
  }
  return undefined;
}

/** The redirector's click counters: every answered visit must be flushed to the queue, none dropped. */
export interface ClickCapture {
  buffered: number;
  flushed: number;
  dropped: number;
}

/** Waits (up to `timeoutMs`) until the redirector's click buffer is empty, then reads its click counters. */
export async function settledClickMetrics(metricsUrl: string, timeoutMs = 30_000): Promise<ClickCapture> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await (await fetch(metricsUrl)).text();
    const value = (name: string) => metricValue(text, name) ?? NaN;
    if (value('redirector_click_buffer_size') === 0 || Date.now() > deadline) {
      return {
        buffered: value('redirector_clicks_buffered_total'),
        flushed: value('redirector_clicks_flushed_total'),
        dropped: value('redirector_clicks_dropped_total'),
      };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Job counts of the click queue under one prefix. */
export interface QueueCounts {
  /** Jobs not finished yet: waiting, active, delayed (retries), prioritized, paused. */
  pending(): Promise<number>;
  failed(): Promise<number>;
  /** How long the oldest waiting job has waited, in ms (0 when none waits). */
  oldestWaitingAgeMs(): Promise<number>;
  close(): Promise<void>;
}

/** Opens a read-only view of the click queue's counts. */
export function queueCounts(redisUrl: string, prefix: string): QueueCounts {
  const connection = createRedis(redisUrl, { maxRetriesPerRequest: null, enableAutoPipelining: false });
  const queue = new Queue(CLICK_QUEUE, { connection, prefix });
  return {
    async pending() {
      const counts = await queue.getJobCounts('wait', 'active', 'delayed', 'prioritized', 'paused');
      return Object.values(counts).reduce((sum, n) => sum + n, 0);
    },
    async failed() {
      return (await queue.getJobCounts('failed')).failed ?? 0;
    },
    async oldestWaitingAgeMs() {
      // Oldest first (asc): the job the worker takes next.
      const [oldest] = await queue.getJobs(['wait'], 0, 0, true);
      return oldest ? Math.max(0, Date.now() - oldest.timestamp) : 0;
    },
    async close() {
      await queue.close();
      connection.disconnect();
    },
  };
}

/**
 * Resolves once the redirector holds no clicks and the queue has no unfinished job, twice in a row
 * (a flush may be on its way between the two reads). `onPending` gets the jobs left.
 */
export async function waitForDrain(
  counts: QueueCounts,
  redirectorMetricsUrl: string,
  onPending: (jobs: number) => void,
  timeoutMs = 300_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let quiet = 0;
  while (quiet < 2) {
    if (Date.now() > deadline) throw new Error('the click queue did not drain in time');
    const metrics = await (await fetch(redirectorMetricsUrl)).text();
    const buffered = metricValue(metrics, 'redirector_click_buffer_size') ?? 0;
    const pending = await counts.pending();
    onPending(pending);
    quiet = buffered === 0 && pending === 0 ? quiet + 1 : 0;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
