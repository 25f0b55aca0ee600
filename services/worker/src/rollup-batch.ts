import type { ClickBatch } from '@deeplink/core';
import {
  CLICK_DIMENSIONS,
  emptyHourlyRollup,
  type HourlyRollup,
  type RollupBatch,
} from '@deeplink/core/db/rollups-repository';
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

/**
 * Sums a batch's clicks in memory by (link, hour), with counts per dimension value, so the database
 * receives one row per group instead of one per click.
 */
export function aggregateClicks(batchId: string, receivedClicks: number, clicks: EnrichedClick[]): RollupBatch {
  const hours = new Map<string, HourlyRollup>();
  const visitors = new Map<HourlyRollup, Set<string>>();
  for (const click of clicks) {
    const key = `${click.linkId}|${click.bucket}`;
    let hour = hours.get(key);
    if (!hour) {
      hour = emptyHourlyRollup(click.linkId, click.bucket);
      hours.set(key, hour);
      visitors.set(hour, new Set());
    }
    hour.clicks++;
    visitors.get(hour)!.add(click.visitor);
    for (const dimension of CLICK_DIMENSIONS) {
      const counts = hour.counts[dimension];
      const value = click.dimensions[dimension];
      counts.set(value, (counts.get(value) ?? 0) + 1);
    }
  }
  for (const [hour, seen] of visitors) hour.visitors = [...seen];
  return { batchId, receivedClicks, hours: [...hours.values()] };
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

/** Enriches, aggregates and records one batch; a database error propagates so the job is retried. */
export function createBatchRollup(deps: { enrich: ClickEnricher; writer: RollupWriter }) {
  return async (batch: ClickBatch): Promise<BatchOutcome> => {
    const counted: EnrichedClick[] = [];
    for (const click of batch.clicks) {
      const enriched = deps.enrich(click);
      if (enriched) counted.push(enriched);
    }
    const recorded = await deps.writer.write(aggregateClicks(batch.batchId, batch.clicks.length, counted));
    return { recorded, received: batch.clicks.length, counted: counted.length };
  };
}
