import type { Queue } from 'bullmq';
import type { RedisClient } from '@deeplink/core/redis';
import type { Logger } from '@deeplink/core/runtime';

/** Where the batches no worker holds are: a Redis that loses its data loses these. */
const UNHELD_STATES = ['waiting', 'prioritized', 'delayed', 'paused'] as const;

/**
 * Looks at the queue's Redis every `intervalMs` and reports when it came back empty: restarted
 * without persistence (or flushed, or evicting). Its run_id alone cannot tell, since a restart
 * from its append-only file changes it too; what tells is the data. A key set at each look (only
 * if missing) is there until the data goes: finding it gone means the batches waiting at the
 * previous look, which no worker held, are lost. Of several workers, the first to look after
 * the loss sets the key again and is the one that reports it.
 */
export function watchQueueRedis({
  queue,
  redis,
  intervalMs,
  log,
  onLost,
}: {
  queue: Queue;
  /** A connection to the queue's Redis. */
  redis: RedisClient;
  intervalMs: number;
  log: Logger;
  /** Called with the batches known lost. */
  onLost: (batches: number) => void;
}): { stop(): void } {
  const key = queue.toKey('kept');
  /** Batches waiting at the last look, undefined before the first. */
  let waiting: number | undefined;
  let looking = false;

  const look = async () => {
    const emptied = (await redis.set(key, String(Date.now()), 'NX')) === 'OK' && waiting !== undefined;
    if (emptied) {
      log.error(
        { batchesLost: waiting },
        "the click queue's Redis came back empty (restarted without its append-only file, flushed or evicting): the batches waiting at the last look are lost",
      );
      onLost(waiting!);
    }
    const counts = await queue.getJobCounts(...UNHELD_STATES);
    waiting = UNHELD_STATES.reduce((sum, state) => sum + (counts[state] ?? 0), 0);
  };

  const tick = () => {
    // While Redis is away BullMQ's commands wait for it (its connection never gives up): one look at a time.
    if (looking) return;
    looking = true;
    look()
      .catch(() => {}) // an outage is logged by the connection's outage log
      .finally(() => (looking = false));
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  tick();
  return { stop: () => clearInterval(timer) };
}
