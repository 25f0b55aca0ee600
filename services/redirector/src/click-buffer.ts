import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import {
  CLICK_BATCH_JOB,
  CLICK_JOB_OPTIONS,
  CLICK_QUEUE,
  type Config,
  PACKED_FIELDS,
  type PackedClickBatch,
  PackedClickBatchBuilder,
} from '@deeplink/core';
import { type RedisClient, replicaConfirmation } from '@deeplink/core/redis';
import { isConnectionError, type Logger, rateLimitedLog, withTimeout } from '@deeplink/core/runtime';
import type { ClickSpool } from './click-spool.js';
import type { Metrics } from './metrics.js';

/** How long one Queue.add may take before the batch counts as not written. */
const ADD_TIMEOUT_MS = 2_000;
/** While the queue is unreachable, how often the spool's replay tries it again. */
const RETRY_PAUSE_MS = 500;
/**
 * On a Redis Cluster, how long after a write that no replica confirmed the batch is written once
 * more: longer than a failover takes, so a batch that its primary took down with it reaches the
 * successor. The job id makes the second write a no-op when the job survived; a job already done
 * and removed is counted once anyway, by its batch id.
 */
export const REWRITE_UNCONFIRMED_AFTER_MS = 10_000;
/** Unconfirmed batches held for that second write; past this the oldest are let go (logged), so a replica down for long cannot grow memory. */
const MAX_UNCONFIRMED = 1_000;

export interface ClickBufferDeps {
  config: Pick<Config, 'QUEUE_PREFIX' | 'CLICK_FLUSH_MS' | 'CLICK_BATCH_SIZE' | 'CLICK_BUFFER_MAX'>;
  /** A dedicated ioredis connection (maxRetriesPerRequest: null; enableOfflineQueue: false to fail fast). */
  connection: RedisClient;
  /** Where sealed batches go while the queue is unreachable, and at shutdown. */
  spool: ClickSpool;
  metrics: Metrics;
  logger: Logger;
  /**
   * Whether a replica has the writes made so far (Redis Cluster `WAIT`; on a single server always
   * true). Defaults to replicaConfirmation on the queue's key; tests pass their own.
   */
  replicated?: () => Promise<boolean>;
  /** Defaults to REWRITE_UNCONFIRMED_AFTER_MS; tests shorten it. */
  rewriteUnconfirmedAfterMs?: number;
}

/** Click recording off the response path: push() is synchronous and never waits for Redis. */
export type ClickBuffer = ReturnType<typeof createClickBuffer>;

const clicksOf = (batch: PackedClickBatch) => batch.clicks.length / PACKED_FIELDS;

/**
 * Collects clicks in memory and writes them to BullMQ as one packed job per batch, every
 * CLICK_FLUSH_MS or as soon as CLICK_BATCH_SIZE are waiting. When a write fails (Redis away), the
 * batch and every one sealed after it go to the spool on disk instead, until a replay of the
 * spool reaches the queue again. Memory holds at most CLICK_BUFFER_MAX clicks: past that (the
 * spool full or failing too), new clicks are dropped and counted.
 */
export function createClickBuffer({ config, connection, spool, metrics, logger, ...deps }: ClickBufferDeps) {
  /** The batch clicks go into now. */
  let filling = new PackedClickBatchBuilder();
  /** Sealed batches not yet written or spooled, oldest first. */
  const sealed: PackedClickBatch[] = [];
  /** Clicks in memory: the filling batch and the sealed ones. */
  let held = 0;
  let flushing: Promise<void> | undefined;
  /** True from a failed write until a write (or a replay of the spool) reaches the queue again. */
  let queueDown = false;
  let retryAt = 0;
  let replaying: Promise<void> | undefined;
  /** What this outage cost so far, for the line that says it is over. */
  let outage = { spooled: 0, dropped: 0 };
  const warnDropped = rateLimitedLog(logger, 'warn');
  const warnQueue = rateLimitedLog(logger, 'warn');
  const warnUnreplicated = rateLimitedLog(logger, 'warn');
  // On a cluster a batch counts as written once a replica of the queue's primary has it too.
  const replicated = deps.replicated ?? replicaConfirmation(connection, `${config.QUEUE_PREFIX}:${CLICK_QUEUE}`);
  const rewriteAfterMs = deps.rewriteUnconfirmedAfterMs ?? REWRITE_UNCONFIRMED_AFTER_MS;
  /** Batches written without a replica's confirmation, oldest first, each with when to write it again. */
  const unconfirmed: { batch: PackedClickBatch; at: number }[] = [];

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

  /** Writes a batch; one no replica confirmed is kept to be written again (see REWRITE_UNCONFIRMED_AFTER_MS). */
  async function add(batch: PackedClickBatch, { confirm = true } = {}): Promise<void> {
    if (queue.broken) {
      void queue.queue.close().catch(() => {});
      queue = openQueue();
    }
    await withTimeout(
      (async () => {
        // Written again (a replay, a retry), the same job id makes BullMQ keep the job it has.
        await queue.queue.add(CLICK_BATCH_JOB, batch, { ...CLICK_JOB_OPTIONS, jobId: batch.batchId });
        if (confirm && !(await replicated())) {
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

  /** Moves sealed batches to the spool while it takes them; those it refuses stay in memory. */
  function spoolSealed(): void {
    while (sealed.length > 0 && spool.append(sealed[0]!)) {
      const count = clicksOf(sealed.shift()!);
      held -= count;
      metrics.clicksSpooled += count;
      outage.spooled += count;
    }
  }

  /** While the queue is down, the next write is tried only after RETRY_PAUSE_MS. */
  const mayTry = () => !queueDown || Date.now() >= retryAt;

  function markDown(error: unknown): void {
    metrics.flushErrors++;
    retryAt = Date.now() + RETRY_PAUSE_MS;
    if (queueDown) return;
    queueDown = true;
    logger.warn({ err: error, held }, 'click queue unreachable; spooling click batches to disk until it is back');
  }

  function markUp(replayed?: { batches: number; clicks: number; skipped: number }): void {
    if (!queueDown && !replayed?.batches) return;
    logger.info(
      { ...outage, replayedBatches: replayed?.batches ?? 0, replayedClicks: replayed?.clicks ?? 0, skippedLines: replayed?.skipped ?? 0 },
      'click queue reachable; spool replayed',
    );
    queueDown = false;
    outage = { spooled: 0, dropped: 0 };
  }

  /**
   * Sends sealed batches one at a time. At the first failure the queue counts as down: that batch
   * and the rest go to the spool, and the spool is replayed once the queue answers again.
   */
  async function drain(): Promise<void> {
    while (sealed.length > 0) {
      const batch = sealed[0]!;
      try {
        await add(batch);
      } catch (error) {
        markDown(error);
        break;
      }
      markUp();
      sealed.shift();
      const count = clicksOf(batch);
      held -= count;
      metrics.clicksFlushed += count;
      metrics.batchesFlushed++;
    }
    if (queueDown) spoolSealed();
  }

  /** Seals what is waiting and sends (or spools) every sealed batch, unless a flush is running already. */
  function flush(): Promise<void> {
    if (flushing) return flushing;
    seal();
    flushing = drain().finally(() => {
      flushing = undefined;
    });
    return flushing;
  }

  /**
   * Writes the unconfirmed batches that are due once more, without asking for confirmation again
   * (a replica that stays away must not make a batch go round for ever); one that cannot be written
   * goes to the spool, as any batch does.
   */
  function rewriteUnconfirmed(): void {
    const now = Date.now();
    while (unconfirmed.length > 0 && unconfirmed[0]!.at <= now) {
      const { batch } = unconfirmed.shift()!;
      metrics.batchesRewritten++;
      add(batch, { confirm: false }).catch((error: unknown) => {
        markDown(error);
        if (!spool.append(batch)) {
          const count = clicksOf(batch);
          metrics.clicksDropped += count;
          warnDropped(
            { count, droppedTotal: metrics.clicksDropped },
            'an unconfirmed click batch could be neither written again nor spooled; dropping it',
          );
        }
      });
    }
  }

  /** Sends the spool's batches to the queue, oldest first; success means the queue is back. */
  function replay(): Promise<void> {
    replaying ??= spool
      .replay(async (batch) => {
        await add(batch);
        metrics.clicksReplayed += clicksOf(batch);
        metrics.clicksFlushed += clicksOf(batch);
        metrics.batchesFlushed++;
      })
      .then(markUp, markDown)
      .finally(() => {
        replaying = undefined;
      });
    return replaying;
  }

  /**
   * Every CLICK_FLUSH_MS: while the queue is down and the next try is not due, new batches go to the
   * spool; otherwise the spool is replayed and what is in memory is sent, side by side (a batch's
   * place in line does not matter: each counts once, whenever it arrives).
   */
  const tick = () => {
    if (!mayTry()) {
      seal();
      spoolSealed();
      return;
    }
    if (spool.bytes() > 0) void replay();
    if (held > 0) void flush();
    if (unconfirmed.length > 0) rewriteUnconfirmed();
  };
  const timer = setInterval(tick, config.CLICK_FLUSH_MS);
  timer.unref();

  return {
    /** Records one click; drops it (counted, logged) when memory holds CLICK_BUFFER_MAX already. Never blocks. */
    push(linkId: string, ts: number, ip: string, userAgent: string, referrer: string): void {
      if (held >= config.CLICK_BUFFER_MAX) {
        metrics.clicksDropped++;
        outage.dropped++;
        warnDropped(
          { max: config.CLICK_BUFFER_MAX, droppedTotal: metrics.clicksDropped, spoolBytes: spool.bytes() },
          'click buffer and spool full; dropping clicks',
        );
        return;
      }
      filling.add(linkId, ts, ip, userAgent, referrer);
      held++;
      metrics.clicksBuffered++;
      if (filling.size === config.CLICK_BATCH_SIZE) {
        seal();
        // A running flush sends this batch too; otherwise start one after the current I/O phase.
        if (!flushing && mayTry()) setImmediate(tick);
      }
    },

    /** Clicks held in memory (waiting for the queue or the spool). */
    size: () => held,

    /** True while the queue is unreachable and sealed batches go to the spool. */
    spooling: () => queueDown,

    /** Sends everything buffered now. */
    flush,

    /**
     * Stops the timers and keeps flushing until memory is empty or `timeoutMs` passed; whatever
     * could not be written then goes to the spool, for the next start to replay. Returns how many
     * clicks neither the queue nor the spool took (lost: the caller's exit code says so).
     */
    async close(timeoutMs: number): Promise<number> {
      clearInterval(timer);
      const deadline = Date.now() + timeoutMs;
      await replaying;
      // With the queue down, what is in memory goes to the spool at once rather than waiting.
      while (held > 0 && !queueDown && Date.now() < deadline) await flush();
      await flushing;
      seal();
      spoolSealed();
      // Not confirmed by a replica yet: the next start writes them again from the spool.
      for (const { batch } of unconfirmed.splice(0)) {
        if (!spool.append(batch)) logger.warn({ batchId: batch.batchId }, 'an unconfirmed click batch could not be spooled at shutdown');
      }
      const lost = held;
      if (lost > 0) logger.error({ lost }, 'clicks neither queued nor spooled at shutdown');
      else if (spool.bytes() > 0)
        logger.warn({ spoolBytes: spool.bytes() }, 'click batches left in the spool; the next start replays them');
      await withTimeout(queue.queue.close(), 1_000, 'click queue close').catch(() => {});
      return lost;
    },
  };
}
