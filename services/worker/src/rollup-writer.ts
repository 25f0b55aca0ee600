import { setTimeout as sleep } from 'node:timers/promises';
import { isRollupTimeout, type RollupBatch, RollupRows, type RollupsRepository, type RollupTimeouts } from '@deeplink/core/db';

interface Pending {
  batchId: string;
  receivedClicks: number;
  /** The batch again, for writing it on its own; built anew so its clicks need not stay in memory meanwhile. */
  again(): RollupBatch;
  resolve(recorded: boolean): void;
  reject(error: unknown): void;
}

/** Batches waiting for the next transaction, with the clicks of the first of each id already summed. */
interface NextTransaction {
  entries: Pending[];
  ids: Set<string>;
  rows: RollupRows;
}

const nextTransaction = (): NextTransaction => ({ entries: [], ids: new Set(), rows: new RollupRows() });

/**
 * Limits on the worker's rollup transactions, from WORKER_STALL_INTERVAL_MS. A worker that stops
 * mid-transaction (frozen, its machine stalled) stops renewing its batches' locks, which expire
 * two intervals later; PostgreSQL cuts its session after one interval idle, so by the time
 * another worker takes those batches back their ids and row locks are free, and the other workers
 * wait at most about an interval on its rows. A lock wait twice that long has another cause (a
 * lock held by something else); the transaction gives up and its batches are retried.
 */
export const rollupTimeouts = (stallIntervalMs: number): RollupTimeouts => ({
  idleInTransaction: stallIntervalMs,
  lock: 2 * stallIntervalMs,
  statement: 4 * stallIntervalMs,
});

/**
 * Writes batches to PostgreSQL one transaction at a time per process. Batches that arrive while a
 * write is under way go together into the next one, so rows that concurrent batches share (a
 * popular link's current hour) are upserted once per transaction rather than once per batch; one
 * transaction per batch would queue every batch behind the previous one's row locks. Their clicks
 * are summed as they arrive, while the database works on the current transaction. Each batch stays
 * all-or-nothing together with its id.
 *
 * Transactions start at most every `minIntervalMs`. What a transaction costs PostgreSQL grows with
 * the rows it touches (a link's hour and each of its dimension values), not with the clicks summed
 * into them: across a thousand links, 32,000 clicks in one transaction cost about an eighth of the
 * CPU per click that 500 do. A fast database would otherwise keep transactions small, and pay
 * that price for every click just when traffic is highest. The pause adds at most the interval to
 * a click's way to the reports.
 */
export function createRollupWriter(
  rollups: RollupsRepository,
  {
    onTransaction = (_seconds: number) => {},
    minIntervalMs = 0,
  }: { onTransaction?: (seconds: number) => void; minIntervalMs?: number } = {},
) {
  let next = nextTransaction();
  let writing = false;
  let lastStarted = Number.NEGATIVE_INFINITY;

  /** Resolves each entry; of entries sharing a batch id only the first can have been recorded. */
  const settle = (entries: Pending[], recorded: Set<string>) => {
    const seen = new Set<string>();
    for (const { batchId, resolve } of entries) {
      resolve(recorded.has(batchId) && !seen.has(batchId));
      seen.add(batchId);
    }
  };

  const drain = async () => {
    writing = true;
    while (next.entries.length > 0) {
      // Batches arriving during the pause join this transaction.
      const pause = lastStarted + minIntervalMs - performance.now();
      if (pause > 0) await sleep(pause);
      const { entries, rows } = next;
      next = nextTransaction();
      const started = performance.now();
      lastStarted = started;
      try {
        // The ids are all the transaction needs besides the sums: recordBatches reads no clicks when given `rows`.
        settle(
          entries,
          await rollups.recordBatches(
            entries.map(({ batchId, receivedClicks }) => ({ batchId, receivedClicks, clicks: [] })),
            rows,
          ),
        );
        onTransaction((performance.now() - started) / 1000);
      } catch (error) {
        // A timeout is about the locks, not the batches: written one by one, each could wait as
        // long again. All go back to the queue, to be retried after BullMQ's back-off.
        if (entries.length === 1 || isRollupTimeout(error)) {
          for (const entry of entries) entry.reject(error);
          continue;
        }
        // One batch that cannot be written must not fail the others, and the sums of a transaction
        // holding a batch recorded before (BatchesRecordedBefore: a redelivery) cannot be used:
        // write each on its own, from its clicks.
        for (const entry of entries) {
          try {
            settle([entry], await rollups.recordBatches([entry.again()]));
          } catch (alone) {
            entry.reject(alone);
          }
        }
      }
    }
    writing = false;
  };

  return {
    /**
     * Resolves true once the batch is committed, false if its id was recorded before; rejects on a
     * database error. Only the batch's sums are kept until its transaction: `again` builds it anew
     * should it have to be written on its own (by default the batch itself is kept for that).
     */
    write(batch: RollupBatch, again: () => RollupBatch = () => batch): Promise<boolean> {
      return new Promise((resolve, reject) => {
        next.entries.push({ batchId: batch.batchId, receivedClicks: batch.receivedClicks, again, resolve, reject });
        if (!next.ids.has(batch.batchId)) {
          next.ids.add(batch.batchId);
          next.rows.add(batch.clicks, batch.previews, batch.events, batch.installs);
        }
        if (!writing) void drain();
      });
    },
  };
}
export type RollupWriter = ReturnType<typeof createRollupWriter>;
