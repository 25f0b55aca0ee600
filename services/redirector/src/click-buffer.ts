import { type AppEventPlatform, CLICK_QUEUE, type ClickEvent, type Config, type InstallClick, readClickJob } from '@deeplink/core';
import { type RedisClient, replicaConfirmation } from '@deeplink/core/redis';
import { type Logger, rateLimitedLog } from '@deeplink/core/runtime';
import { createClickQueueWriter } from './click-queue-writer.js';
import type { ClickSpool, SpoolReplay } from './click-spool.js';
import { createHeldClicks } from './held-clicks.js';
import type { Metrics } from './metrics.js';
import { createQueueOutage } from './queue-outage.js';

/**
 * On a Redis Cluster, how long after a write that no replica confirmed the batch is written once
 * more: longer than a failover takes, so a batch that its primary took down with it reaches the
 * successor. The job id makes the second write a no-op when the job survived; a job already done
 * and removed is counted once anyway, by its batch id.
 */
export const REWRITE_UNCONFIRMED_AFTER_MS = 10_000;

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

/**
 * Collects clicks in memory and writes them to BullMQ as one packed job per batch, every
 * CLICK_FLUSH_MS or as soon as CLICK_BATCH_SIZE are waiting. When a write fails (Redis away), the
 * batch and every one sealed after it go to the spool on disk instead, until a replay of the
 * spool reaches the queue again. Memory holds at most CLICK_BUFFER_MAX clicks: past that (the
 * spool full or failing too), new clicks are dropped and counted.
 *
 * The parts: the clicks in memory (held-clicks.ts), the writer to the queue with its replica
 * confirmations (click-queue-writer.ts), the outage state with its retry pause (queue-outage.ts),
 * the spool (click-spool.ts); this file moves batches between them.
 */
export function createClickBuffer({ config, connection, spool, metrics, logger, ...deps }: ClickBufferDeps) {
  const held = createHeldClicks(config.CLICK_BATCH_SIZE);
  const outage = createQueueOutage({ metrics, logger });
  const writer = createClickQueueWriter({
    connection,
    prefix: config.QUEUE_PREFIX,
    // On a cluster a batch counts as written once a replica of the queue's primary has it too.
    replicated: deps.replicated ?? replicaConfirmation(connection, `${config.QUEUE_PREFIX}:${CLICK_QUEUE}`),
    rewriteAfterMs: deps.rewriteUnconfirmedAfterMs ?? REWRITE_UNCONFIRMED_AFTER_MS,
    metrics,
    logger,
  });
  const warnDropped = rateLimitedLog(logger, 'warn');
  /** The send of sealed batches under way, if any: one at a time keeps them in order. */
  let sending: Promise<void> | undefined;
  /** The replay of the spool under way, if any. */
  let replaying: Promise<void> | undefined;

  const written = (clicks: number) => {
    metrics.clicksFlushed += clicks;
    metrics.batchesFlushed++;
  };

  /** The spool hand-off: moves sealed batches to the spool while it takes them; those it refuses stay in memory. */
  function spoolSealed(): void {
    for (let batch = held.oldest(); batch && spool.append(batch); batch = held.oldest()) {
      const count = held.release();
      metrics.clicksSpooled += count;
      outage.spooled(count);
    }
  }

  /**
   * The sender: writes sealed batches one at a time. At the first failure the queue counts as down:
   * that batch and the rest go to the spool, and the spool is replayed once the queue answers again.
   */
  async function sendSealed(): Promise<void> {
    for (let batch = held.oldest(); batch; batch = held.oldest()) {
      try {
        await writer.write(batch);
      } catch (error) {
        outage.writeFailed(error, held.size());
        break;
      }
      outage.reached();
      written(held.release());
    }
    if (outage.isDown()) spoolSealed();
  }

  /** Seals what is waiting and sends (or spools) every sealed batch, unless a send is running already. */
  function flush(): Promise<void> {
    if (sending) return sending;
    held.seal();
    sending = sendSealed().finally(() => {
      sending = undefined;
    });
    return sending;
  }

  /**
   * Writes the unconfirmed batches that are due once more, without asking for confirmation again
   * (a replica that stays away must not make a batch go round for ever); one that cannot be written
   * goes to the spool, as any batch does.
   */
  function rewriteUnconfirmed(): void {
    for (const batch of writer.takeDue()) {
      metrics.batchesRewritten++;
      writer.write(batch, { confirm: false }).catch((error: unknown) => {
        outage.writeFailed(error, held.size());
        if (spool.append(batch)) return;
        const count = readClickJob(batch)?.clicks.length ?? 0;
        metrics.clicksDropped += count;
        warnDropped(
          { count, droppedTotal: metrics.clicksDropped },
          'an unconfirmed click batch could be neither written again nor spooled; dropping it',
        );
      });
    }
  }

  /** Says what a replay set aside: lines of the spool that are no batch this release reads stay on disk, for a person. */
  function reportSetAside({ setAside, reasons }: SpoolReplay): void {
    if (setAside === 0) return;
    metrics.spoolLinesSetAside += setAside;
    logger.error(
      { lines: setAside, reasons, file: spool.setAsidePath },
      'spooled lines that are not a readable click batch were set aside, not replayed',
    );
  }

  /** Sends the spool's batches to the queue, oldest first; success means the queue is back. */
  function replay(): Promise<void> {
    replaying ??= spool
      .replay(async (batch, clicks) => {
        await writer.write(batch);
        metrics.clicksReplayed += clicks;
        written(clicks);
      })
      .then(
        (replayed) => {
          reportSetAside(replayed);
          outage.reached(replayed);
        },
        (error: unknown) => outage.writeFailed(error, held.size()),
      )
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
    if (!outage.mayTry()) {
      held.seal();
      spoolSealed();
      return;
    }
    if (spool.bytes() > 0) void replay();
    if (held.size() > 0) void flush();
    if (writer.hasUnconfirmed()) rewriteUnconfirmed();
  };
  const timer = setInterval(tick, config.CLICK_FLUSH_MS);
  timer.unref();

  /**
   * Memory is full: moves sealed batches to the spool, newest first, until there is room. A write
   * to the queue can hang until its timeout when Redis goes away mid-write, and clicks keep coming
   * meanwhile; the spool takes them (the next tick replays it once the queue answers) instead of
   * their being dropped. The batch being written stays. True when there is room now.
   */
  function spillToSpool(): boolean {
    held.seal();
    while (held.size() >= config.CLICK_BUFFER_MAX) {
      const count = held.spillNewest(sending ? 1 : 0, spool.append);
      if (count === 0) return false;
      metrics.clicksSpooled += count;
      outage.spooled(count);
    }
    return true;
  }

  /** Drops a click memory has no room for (counted, logged). */
  function drop(): void {
    metrics.clicksDropped++;
    outage.dropped();
    warnDropped(
      { max: config.CLICK_BUFFER_MAX, droppedTotal: metrics.clicksDropped, spoolBytes: spool.bytes() },
      'click buffer and spool full; dropping clicks',
    );
  }

  return {
    /**
     * Records one click; when memory holds CLICK_BUFFER_MAX already, moves sealed batches to the
     * spool first, and drops the click (counted, logged) only when the spool takes none. Never
     * blocks. The click's fields are copied: the caller may reuse the object. `redirectedTo`: the
     * visitor's platform when the answer sent them to an app store (a REDIRECT event goes with the click),
     * and `install` the install token that answer handed out, with the visitor's language.
     */
    push(click: ClickEvent, redirectedTo?: AppEventPlatform, install?: InstallClick): void {
      if (held.size() >= config.CLICK_BUFFER_MAX && !spillToSpool()) {
        drop();
        return;
      }
      metrics.clicksBuffered++;
      // A full batch is sealed: a running send takes it too; otherwise start one after the current I/O phase.
      if (held.add(click, redirectedTo, install) && !sending && outage.mayTry()) setImmediate(tick);
    },

    /** Clicks held in memory (waiting for the queue or the spool). */
    size: held.size,

    /** True while the queue is unreachable and sealed batches go to the spool. */
    spooling: outage.isDown,

    /** Sends everything buffered now. */
    flush,

    /**
     * The shutdown drain: stops the timer and keeps flushing until memory is empty or `timeoutMs`
     * passed; whatever could not be written then goes to the spool, for the next start to replay.
     * Returns how many clicks neither the queue nor the spool took (lost: the caller's exit code says so).
     */
    async close(timeoutMs: number): Promise<number> {
      clearInterval(timer);
      const deadline = Date.now() + timeoutMs;
      await replaying;
      // With the queue down, what is in memory goes to the spool at once rather than waiting.
      while (held.size() > 0 && !outage.isDown() && Date.now() < deadline) await flush();
      await sending;
      held.seal();
      spoolSealed();
      // Not confirmed by a replica yet: the next start writes them again from the spool.
      for (const batch of writer.takeAllUnconfirmed()) {
        if (!spool.append(batch)) logger.warn({ batchId: batch.batchId }, 'an unconfirmed click batch could not be spooled at shutdown');
      }
      const lost = held.size();
      if (lost > 0) logger.error({ lost }, 'clicks neither queued nor spooled at shutdown');
      else if (spool.bytes() > 0)
        logger.warn({ spoolBytes: spool.bytes() }, 'click batches left in the spool; the next start replays them');
      await writer.close();
      return lost;
    },
  };
}
