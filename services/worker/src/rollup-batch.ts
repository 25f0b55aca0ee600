import { type ClickBatch, readClickJob } from '@deeplink/core';
import type { RollupBatch, RollupPreview } from '@deeplink/core/db';
import { previewOf, type ClickEnricher, type EnrichedClick } from './click-enricher.js';
import type { RollupWriter } from './rollup-writer.js';

const MAX_BATCH_ID_LENGTH = 200;

/** What happened to one batch. */
export interface BatchOutcome {
  /** False when the batch id had been rolled up before, so nothing was added. */
  recorded: boolean;
  received: number;
  /** Clicks left after dropping bots and malformed events (deleted links are dropped in SQL). */
  counted: number;
}

/**
 * The clicks of a job's packed batch, or undefined for data that can never succeed (not a packed
 * batch, or an id PostgreSQL cannot hold) and so is not retried.
 */
export function readClickBatch(data: unknown): ClickBatch | undefined {
  const batch = readClickJob(data);
  if (!batch) return undefined;
  const { batchId } = batch;
  // PostgreSQL text cannot hold NUL; such an id would fail every attempt.
  const usableId = batchId.length > 0 && batchId.length <= MAX_BATCH_ID_LENGTH && !batchId.includes('\u0000');
  return usableId ? batch : undefined;
}

/**
 * Enriches and records one batch; a database error propagates so the job is retried. `read` gives
 * the batch from the job's data each time it is called: the enriched clicks are summed into the
 * next transaction and dropped, and built again from the job only if the batch must be written on
 * its own, so a worker holding hundreds of batches keeps their sums rather than their clicks.
 */
export function createBatchRollup(deps: { enrich: ClickEnricher; writer: RollupWriter }) {
  const enrichAll = (batch: ClickBatch): RollupBatch => {
    const counted: EnrichedClick[] = [];
    const previews: RollupPreview[] = [];
    for (const click of batch.clicks) {
      const enriched = deps.enrich(click);
      if (enriched) {
        counted.push(enriched);
      } else {
        const preview = previewOf(click);
        if (preview) previews.push(preview);
      }
    }
    return { batchId: batch.batchId, receivedClicks: batch.clicks.length, clicks: counted, previews };
  };
  return async (read: () => ClickBatch): Promise<BatchOutcome> => {
    const batch = enrichAll(read());
    const outcome = { received: batch.receivedClicks, counted: batch.clicks.length };
    const written = deps.writer.write(batch, () => enrichAll(read()));
    return { recorded: await written, ...outcome };
  };
}
