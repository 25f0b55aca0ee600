import { randomUUID } from 'node:crypto';
import { Queue, type ConnectionOptions } from 'bullmq';
import type { Config } from '@deeplink/core/config';
import { CLICK_BATCH_JOB, CLICK_QUEUE, type ClickBatch, type ClickEvent } from '@deeplink/core/queue/clicks';
import { rateLimitedLog, type Logger } from './logger.js';
import type { Metrics } from './metrics.js';

/** How long one Queue.add may take before the batch goes back to the buffer for another try. */
const ADD_TIMEOUT_MS = 2_000;
/** After a failed flush, the next scheduled one waits this long (Redis is probably away). */
const RETRY_PAUSE_MS = 500;

/**
 * Job options: the worker retries a failing batch; failed jobs stay for inspection. Completed jobs
 * are removed at once: they hold client addresses, and exactly-once rests on the batch ids the
 * worker records in PostgreSQL, not on BullMQ's job history.
 */
export const CLICK_JOB_OPTIONS = {
  attempts: 10,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: true,
  removeOnFail: false,
} as const;

export interface ClickBufferDeps {
  config: Pick<Config, 'QUEUE_PREFIX' | 'CLICK_FLUSH_MS' | 'CLICK_BATCH_SIZE' | 'CLICK_BUFFER_MAX'>;
  /** A dedicated ioredis connection (maxRetriesPerRequest: null; enableOfflineQueue: false to fail fast). */
  connection: ConnectionOptions;
  metrics: Metrics;
  logger: Logger;
}

/** Click recording off the response path: push() is synchronous and never waits for Redis. */
export type ClickBuffer = ReturnType<typeof createClickBuffer>;

/**
 * Collects clicks in memory and writes them to BullMQ as one job per batch, every CLICK_FLUSH_MS
 * or as soon as CLICK_BATCH_SIZE are waiting. While Redis is away it holds up to CLICK_BUFFER_MAX
 * clicks and drops (and counts) the rest.
 */
export function createClickBuffer({ config, connection, metrics, logger }: ClickBufferDeps) {
  let waiting: ClickEvent[] = [];
  /** Batches whose add failed; resent with the same id, so a duplicate add is a no-op. */
  const retries: ClickBatch[] = [];
  let held = 0;
  let flushing: Promise<void> | undefined;
  let pausedUntil = 0;
  const warnDropped = rateLimitedLog(logger.warn);
  const warnFlush = rateLimitedLog(logger.warn);
  const warnQueue = rateLimitedLog(logger.warn);

  let queue = openQueue();
  function openQueue(): { queue: Queue<ClickBatch>; broken: boolean } {
    const opened = { queue: new Queue<ClickBatch>(CLICK_QUEUE, { connection, prefix: config.QUEUE_PREFIX }), broken: false };
    opened.queue.on('error', (error) => warnQueue('click queue error', { error }));
    // A queue whose initial handshake failed rejects every add from then on: replace it.
    opened.queue.waitUntilReady().catch(() => {
      opened.broken = true;
    });
    return opened;
  }

  async function add(batch: ClickBatch): Promise<void> {
    if (queue.broken) {
      void queue.queue.close().catch(() => {});
      queue = openQueue();
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        queue.queue.add(CLICK_BATCH_JOB, batch, { ...CLICK_JOB_OPTIONS, jobId: batch.batchId }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('queue add timed out')), ADD_TIMEOUT_MS);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A failed batch first; then a full batch, or (`partial`) whatever is waiting. */
  function nextBatch(partial: boolean): ClickBatch | undefined {
    if (retries.length > 0) return retries.shift();
    if (waiting.length === 0 || (!partial && waiting.length < config.CLICK_BATCH_SIZE)) return undefined;
    const clicks = waiting.length <= config.CLICK_BATCH_SIZE ? waiting : waiting.slice(0, config.CLICK_BATCH_SIZE);
    waiting = clicks === waiting ? [] : waiting.slice(config.CLICK_BATCH_SIZE);
    return { batchId: randomUUID(), clicks };
  }

  /** Sends batches one at a time; stops at the first failure. */
  async function drain(partial: boolean): Promise<void> {
    for (let batch = nextBatch(partial); batch; batch = nextBatch(partial)) {
      try {
        await add(batch);
      } catch (error) {
        retries.unshift(batch);
        pausedUntil = Date.now() + RETRY_PAUSE_MS;
        metrics.flushErrors++;
        warnFlush('click batch flush failed; keeping it for the next try', { error, held });
        return;
      }
      held -= batch.clicks.length;
      metrics.clicksFlushed += batch.clicks.length;
      metrics.batchesFlushed++;
    }
  }

  /** Starts a flush unless one is running: full batches only, or (`partial`) everything. */
  function flush(partial = true): Promise<void> {
    flushing ??= drain(partial).finally(() => {
      flushing = undefined;
    });
    return flushing;
  }

  const scheduledFlush = (partial: boolean) => {
    if (held > 0 && Date.now() >= pausedUntil) void flush(partial);
  };
  const timer = setInterval(() => scheduledFlush(true), config.CLICK_FLUSH_MS);
  timer.unref();

  return {
    /** Records one click; drops it (counted, logged) when the buffer is full. Never blocks. */
    push(click: ClickEvent): void {
      if (held >= config.CLICK_BUFFER_MAX) {
        metrics.clicksDropped++;
        warnDropped('click buffer full; dropping clicks', { max: config.CLICK_BUFFER_MAX, dropped: metrics.clicksDropped });
        return;
      }
      waiting.push(click);
      held++;
      metrics.clicksBuffered++;
      if (waiting.length === config.CLICK_BATCH_SIZE) setImmediate(() => scheduledFlush(false));
    },

    /** Clicks held in memory (waiting or awaiting a retry). */
    size: () => held,

    /** Sends everything buffered now. */
    flush: () => flush(true),

    /**
     * Stops the timer, keeps flushing until the buffer is empty or `timeoutMs` passed, then
     * closes the queue. Returns how many clicks could not be written.
     */
    async close(timeoutMs: number): Promise<number> {
      clearInterval(timer);
      const deadline = Date.now() + timeoutMs;
      while (held > 0 && Date.now() < deadline) {
        await flush();
        if (held > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(100, Math.max(0, deadline - Date.now()))));
      }
      const lost = held;
      if (lost > 0) logger.error('click buffer not fully flushed at shutdown', { lost });
      await Promise.race([queue.queue.close(), new Promise((resolve) => setTimeout(resolve, 1_000).unref())]).catch(() => {});
      return lost;
    },
  };
}
