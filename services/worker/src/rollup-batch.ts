import type { ClickBatch } from '@deeplink/core';
import type { DimensionCount, HourlyTotal, RollupBatch, RollupsRepository } from '@deeplink/core/db/rollups-repository';
import type { ClickEnricher, EnrichedClick } from './click-enricher.js';

/** What happened to one batch. */
export interface BatchOutcome {
  /** False when the batch id had been rolled up before, so nothing was added. */
  recorded: boolean;
  received: number;
  /** Clicks left after dropping bots and malformed events (deleted links are dropped in SQL). */
  counted: number;
}

/**
 * Sums a batch's clicks in memory by (link, hour) and by (link, hour, dimension, value), so the
 * database receives one row per group instead of one per click.
 */
export function aggregateClicks(batchId: string, receivedClicks: number, clicks: EnrichedClick[]): RollupBatch {
  const totals = new Map<string, HourlyTotal & { seen: Set<string> }>();
  const dimensions = new Map<string, DimensionCount>();
  for (const click of clicks) {
    const group = `${click.linkId}|${click.bucket}`;
    let total = totals.get(group);
    if (!total) {
      total = { linkId: click.linkId, bucket: click.bucket, clicks: 0, visitors: [], seen: new Set() };
      totals.set(group, total);
    }
    total.clicks++;
    total.seen.add(click.visitor);
    for (const [dimension, value] of Object.entries(click.dimensions) as [DimensionCount['dimension'], string][]) {
      const key = `${group}|${dimension}|${value}`;
      const row = dimensions.get(key);
      if (row) row.clicks++;
      else dimensions.set(key, { linkId: click.linkId, bucket: click.bucket, dimension, value, clicks: 1 });
    }
  }
  return {
    batchId,
    receivedClicks,
    totals: [...totals.values()].map(({ seen, ...total }) => ({ ...total, visitors: [...seen] })),
    dimensions: [...dimensions.values()],
  };
}

/** True for job data shaped like a ClickBatch; anything else can never succeed and is not retried. */
export function isClickBatch(data: unknown): data is ClickBatch {
  if (typeof data !== 'object' || data === null) return false;
  const { batchId, clicks } = data as Partial<ClickBatch>;
  return (
    typeof batchId === 'string' && batchId.length > 0 && Array.isArray(clicks) &&
    clicks.every((click) => typeof click === 'object' && click !== null)
  );
}

/** Enriches, aggregates and records one batch; a database error propagates so the job is retried. */
export function createBatchRollup(deps: { enrich: ClickEnricher; rollups: RollupsRepository }) {
  return async (batch: ClickBatch): Promise<BatchOutcome> => {
    const counted: EnrichedClick[] = [];
    for (const click of batch.clicks) {
      const enriched = deps.enrich(click);
      if (enriched) counted.push(enriched);
    }
    const recorded = await deps.rollups.recordBatch(aggregateClicks(batch.batchId, batch.clicks.length, counted));
    return { recorded, received: batch.clicks.length, counted: counted.length };
  };
}
