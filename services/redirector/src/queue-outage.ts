import type { Logger } from '@deeplink/core/runtime';
import type { SpoolReplay } from './click-spool.js';
import type { Metrics } from './metrics.js';

/** While the queue is unreachable, how often a write (the spool's replay) tries it again. */
const RETRY_PAUSE_MS = 500;

/**
 * Whether the click queue counts as down: from a failed write until a write, or a replay of the
 * spool, reaches it again. Owns the retry pause and what the outage cost, for the line that says it is over.
 */
export function createQueueOutage({ metrics, logger }: { metrics: Metrics; logger: Logger }) {
  let down = false;
  let retryAt = 0;
  let cost = { spooled: 0, dropped: 0 };

  return {
    isDown: () => down,

    /** While the queue is down, the next write is tried only after RETRY_PAUSE_MS. */
    mayTry: () => !down || Date.now() >= retryAt,

    /** A write failed: the queue is down (said once per outage), and the next try waits. */
    writeFailed(error: unknown, held: number): void {
      metrics.flushErrors++;
      retryAt = Date.now() + RETRY_PAUSE_MS;
      if (down) return;
      down = true;
      logger.warn({ err: error, held }, 'click queue unreachable; spooling click batches to disk until it is back');
    },

    /** A write (or a replay, with what it sent) reached the queue: an outage is over, and says what it cost. */
    reached(replayed?: SpoolReplay): void {
      if (!down && !replayed?.batches) return;
      logger.info(
        {
          ...cost,
          replayedBatches: replayed?.batches ?? 0,
          replayedClicks: replayed?.clicks ?? 0,
          setAsideLines: replayed?.setAside ?? 0,
        },
        'click queue reachable; spool replayed',
      );
      down = false;
      cost = { spooled: 0, dropped: 0 };
    },

    spooled(clicks: number): void {
      cost.spooled += clicks;
    },

    dropped(): void {
      cost.dropped++;
    },
  };
}

export type QueueOutage = ReturnType<typeof createQueueOutage>;
