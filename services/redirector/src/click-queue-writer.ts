import { Queue } from 'bullmq';
import { CLICK_BATCH_JOB, CLICK_JOB_OPTIONS, CLICK_QUEUE, type ClickJobData } from '@deeplink/core';
import type { RedisClient } from '@deeplink/core/redis';
import { isConnectionError, type Logger, rateLimitedLog, withTimeout } from '@deeplink/core/runtime';
import type { Metrics } from './metrics.js';

/** How long one Queue.add may take before the batch counts as not written. */
const ADD_TIMEOUT_MS = 2_000;
/** Unconfirmed batches held for their second write; past this the oldest are let go (logged), so a replica down for long cannot grow memory. */
const MAX_UNCONFIRMED = 1_000;

export interface ClickQueueWriterDeps {
  connection: RedisClient;
  prefix: string;
  /** Whether a replica has the writes made so far (Redis Cluster `WAIT`; on a single server always true). */
  replicated: () => Promise<boolean>;
  /** How long after an unconfirmed write the batch is written once more. */
  rewriteAfterMs: number;
  metrics: Metrics;
  logger: Logger;
}

/**
 * Writes click batches (job data of any readable format: new batches, or the spool's) to the BullMQ queue, one job per batch with the batch id as job id (written
 * again, by a replay or a retry, the same id makes BullMQ keep the job it has). Owns the Queue (a
 * new one when the first handshake failed) and the batches no replica confirmed yet.
 */
export function createClickQueueWriter({ connection, prefix, replicated, rewriteAfterMs, metrics, logger }: ClickQueueWriterDeps) {
  const warnQueue = rateLimitedLog(logger, 'warn');
  const warnUnreplicated = rateLimitedLog(logger, 'warn');
  /** Batches written without a replica's confirmation, oldest first, each with when to write it again. */
  const unconfirmed: { batch: ClickJobData; at: number }[] = [];

  function openQueue(): { queue: Queue<ClickJobData>; broken: boolean } {
    const opened = { queue: new Queue<ClickJobData>(CLICK_QUEUE, { connection, prefix }), broken: false };
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
  let current = openQueue();

  function holdUnconfirmed(batch: ClickJobData): void {
    metrics.unreplicatedBatches++;
    warnUnreplicated(
      { batchId: batch.batchId, rewriteInMs: rewriteAfterMs },
      'click batch written, but no replica confirmed it in time; it will be written again',
    );
    if (unconfirmed.length >= MAX_UNCONFIRMED) {
      warnUnreplicated({ held: MAX_UNCONFIRMED }, 'too many unconfirmed click batches; the oldest will not be written again');
      unconfirmed.shift();
    }
    unconfirmed.push({ batch, at: Date.now() + rewriteAfterMs });
  }

  return {
    /**
     * Writes a batch, within ADD_TIMEOUT_MS or it rejects. With `confirm`, one that no replica
     * confirmed is kept to be written again (see REWRITE_UNCONFIRMED_AFTER_MS).
     */
    async write(batch: ClickJobData, { confirm = true } = {}): Promise<void> {
      if (current.broken) {
        void current.queue.close().catch(() => {});
        current = openQueue();
      }
      const { queue } = current;
      await withTimeout(
        (async () => {
          await queue.add(CLICK_BATCH_JOB, batch, { ...CLICK_JOB_OPTIONS, jobId: batch.batchId });
          if (confirm && !(await replicated())) holdUnconfirmed(batch);
        })(),
        ADD_TIMEOUT_MS,
        'queue add',
      );
    },

    /** Takes the unconfirmed batches whose second write is due. */
    takeDue(now = Date.now()): ClickJobData[] {
      let due = 0;
      while (due < unconfirmed.length && unconfirmed[due]!.at <= now) due++;
      return unconfirmed.splice(0, due).map(({ batch }) => batch);
    },

    /** Takes every unconfirmed batch (at shutdown: the spool keeps them for the next start). */
    takeAllUnconfirmed: (): ClickJobData[] => unconfirmed.splice(0).map(({ batch }) => batch),

    hasUnconfirmed: () => unconfirmed.length > 0,

    close: () => withTimeout(current.queue.close(), 1_000, 'click queue close').catch(() => {}),
  };
}

export type ClickQueueWriter = ReturnType<typeof createClickQueueWriter>;
