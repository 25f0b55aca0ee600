import type { ClickBatch } from '@deeplink/core';
import type { ClickEnricher, EnrichedClick } from './click-enricher.js';
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

/** True for job data shaped like a ClickBatch; anything else can never succeed and is not retried. */
export function isClickBatch(data: unknown): data is ClickBatch {
  if (typeof data !== 'object' || data === null) return false;
  const { batchId, clicks } = data as Partial<ClickBatch>;
  return (
    typeof batchId === 'string' && batchId.length > 0 && batchId.length <= MAX_BATCH_ID_LENGTH &&
    // PostgreSQL text cannot hold NUL; such an id would fail every attempt.
    !batchId.includes('\u0000') && Array.isArray(clicks) &&
    clicks.every((click) => typeof click === 'object' && click !== null)
  );
}

/** Enriches and records one batch; a database error propagates so the job is retried. */
export function createBatchRollup(deps: { enrich: ClickEnricher; writer: RollupWriter }) {
  return async (batch: ClickBatch): Promise<BatchOutcome> => {
    const counted: EnrichedClick[] = [];
    for (const click of batch.clicks) {
      const enriched = deps.enrich(click);
      if (enriched) counted.push(enriched);
    }
    const recorded = await deps.writer.write({ batchId: batch.batchId, receivedClicks: batch.clicks.length, clicks: counted });
    return { recorded, received: batch.clicks.length, counted: counted.length };
  };
}
