import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import type { Config } from '@deeplink/core/config';
import { replicaConfirmation, type RedisClient } from '@deeplink/core/redis/client';
import { CLICK_BATCH_JOB, CLICK_JOB_OPTIONS, CLICK_QUEUE, PACKED_FIELDS, PackedClickBatchBuilder, type PackedClickBatch } from '@deeplink/core/queue/clicks';
import { rateLimitedLog, type Logger } from '@deeplink/core/runtime/logger';
import { isConnectionError } from '@deeplink/core/runtime/redis-connections';
import { withTimeout } from '@deeplink/core/runtime/timeout';
import type { Metrics } from './metrics.js';

/** How long one Queue.add may take before the batch goes back to the buffer for another try. */
const ADD_TIMEOUT_MS = 2_000;
/** After a failed flush, the next scheduled one waits this long (Redis is probably away). */
const RETRY_PAUSE_MS = 500;

export interface ClickBufferDeps {
  config: Pick<Config, 'QUEUE_PREFIX' | 'CLICK_FLUSH_MS' | 'CLICK_BATCH_SIZE' | 'CLICK_BUFFER_MAX'>;
  /** A dedicated ioredis connection (maxRetriesPerRequest: null; enableOfflineQueue: false to fail fast). */
  connection: RedisClient;
  metrics: Metrics;
  logger: Logger;
}

/** Click recording off the response path: push() is synchronous and never waits for Redis. */
export type ClickBuffer = ReturnType<typeof createClickBuffer>;

/**
 * Collects clicks in memory and writes them to BullMQ as one packed job per batch, every
 * CLICK_FLUSH_MS or as soon as CLICK_BATCH_SIZE are waiting. While Redis is away it holds up to
 * CLICK_BUFFER_MAX clicks and drops (and counts) the rest.
 */
export function createClickBuffer({ config, connection, metrics, logger }: ClickBufferDeps) {
  /** The batch clicks go into now. */
  let filling = new PackedClickBatchBuilder();
  /** Sealed batches not yet written, oldest first; a failed one goes back to the front with its id. */
  const sealed: PackedClickBatch[] = [];
  let held = 0;
  let flushing: Promise<void> | undefined;
  let pausedUntil = 0;
  const warnDropped = rateLimitedLog(logger, 'warn');
  const warnFlush = rateLimitedLog(logger, 'warn');
  const warnQueue = rateLimitedLog(logger, 'warn');

  const warnUnreplicated = rateLimitedLog(logger, 'warn');
  // On a cluster a batch counts as written once a replica of the queue's primary has it too.
  const replicated = replicaConfirmation(connection, `${config.QUEUE_PREFIX}:${CLICK_QUEUE}`);

  let queue = openQueue();
  function openQueue(): { queue: Queue<PackedClickBatch>; broken: boolean } {
    const opened = { queue: new Queue<PackedClickBatch>(CLICK_QUEUE, { connection, prefix: config.QUEUE_PREFIX }), broken: false };
    // Connection errors are the outage log's (it follows the connection itself); others are logged here.
    opened.queue.on('error', (error) => {
      if (!isConnectionError(error)) warnQueue({ err: error }, 'click queue error');
    });
    // A queue whose initial handshake failed rejects every add from then on: replace it.
    opened.queue.waitUntilReady().catch(() => {
      opened.broken = true;
    });
    return opened;
  }

  async function add(batch: PackedClickBatch): Promise<void> {
    if (queue.broken) {
      void queue.queue.close().catch(() => {});
      queue = openQueue();
    }
    await withTimeout(
      (async () => {
        // Written again after a failure, the same job id makes BullMQ keep the job it has.
        await queue.queue.add(CLICK_BATCH_JOB, batch, { ...CLICK_JOB_OPTIONS, jobId: batch.batchId });
        if (!(await replicated())) {
          metrics.unreplicatedBatches++;
          warnUnreplicated({ batchId: batch.batchId }, 'click batch written, but no replica confirmed it in time');
        }
      })(),
      ADD_TIMEOUT_MS,
      'queue add',
    );
  }

  /** Closes the filling batch (if it holds anything) so the next drain sends it. */
  function seal(): void {
    if (filling.size === 0) return;
    sealed.push(filling.build(randomUUID()));
    filling = new PackedClickBatchBuilder();
  }

  /**
   * Sends sealed batches one at a time; stops at the first failure. Clicks that arrive meanwhile
   * fill the next batch, which goes out when it is full or at the next timed flush.
   */
  async function drain(): Promise<void> {
    for (let batch = sealed.shift(); batch; batch = sealed.shift()) {
      try {
        await add(batch);
      } catch (error) {
        sealed.unshift(batch);
        pausedUntil = Date.now() + RETRY_PAUSE_MS;
        metrics.flushErrors++;
        warnFlush({ err: error, held }, 'click batch flush failed; keeping it for the next try');
        return;
      }
      const count = batch.clicks.length / PACKED_FIELDS;
      held -= count;
      metrics.clicksFlushed += count;
      metrics.batchesFlushed++;
    }
  }

  /** Seals what is waiting and sends every sealed batch, unless a flush is running already. */
  function flush(): Promise<void> {
    if (flushing) return flushing;
    seal();
    flushing = drain().finally(() => {
      flushing = undefined;
    });
    return flushing;
  }

  const scheduledFlush = () => {
    if (held > 0 && Date.now() >= pausedUntil) void flush();
  };
  const timer = setInterval(scheduledFlush, config.CLICK_FLUSH_MS);
  timer.unref();

  return {
    /** Records one click; drops it (counted, logged) when the buffer is full. Never blocks. */
    push(linkId: string, ts: number, ip: string, userAgent: string, referrer: string): void {
      if (held >= config.CLICK_BUFFER_MAX) {
        metrics.clicksDropped++;
        warnDropped({ max: config.CLICK_BUFFER_MAX, dropped: metrics.clicksDropped }, 'click buffer full; dropping clicks');
        return;
      }
      filling.add(linkId, ts, ip, userAgent, referrer);
      held++;
      metrics.clicksBuffered++;
      if (filling.size === config.CLICK_BATCH_SIZE) {
        seal();
        // A running flush sends this batch too; otherwise start one after the current I/O phase.
        if (!flushing && Date.now() >= pausedUntil) setImmediate(scheduledFlush);
      }
    },

    /** Clicks held in memory (waiting or awaiting a retry). */
    size: () => held,

    /** Sends everything buffered now. */
    flush,

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
      if (lost > 0) logger.error({ lost }, 'click buffer not fully flushed at shutdown');
      await withTimeout(queue.queue.close(), 1_000, 'click queue close').catch(() => {});
      return lost;
    },
  };
}
