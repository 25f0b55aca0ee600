import type { ClickBatch } from '@deeplink/core';
import {
  CLICK_DIMENSIONS,
  type DimensionCount,
  type HourlyTotal,
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

interface Group {
  total: HourlyTotal;
  visitors: Set<string>;
  /** Per dimension (in CLICK_DIMENSIONS order): value → count. */
  counts: Map<string, number>[];
}

/**
 * Sums a batch's clicks in memory by (link, hour) and by (link, hour, dimension, value), so the
 * database receives one row per group instead of one per click.
 */
export function aggregateClicks(batchId: string, receivedClicks: number, clicks: EnrichedClick[]): RollupBatch {
  const groups = new Map<string, Group>();
  for (const click of clicks) {
    const key = `${click.linkId}|${click.bucket}`;
    let group = groups.get(key);
    if (!group) {
      group = {
        total: { linkId: click.linkId, bucket: click.bucket, clicks: 0, visitors: [] },
        visitors: new Set(),
        counts: CLICK_DIMENSIONS.map(() => new Map()),
      };
      groups.set(key, group);
    }
    group.total.clicks++;
    group.visitors.add(click.visitor);
    for (let i = 0; i < CLICK_DIMENSIONS.length; i++) {
      const value = click.dimensions[CLICK_DIMENSIONS[i]!];
      const counts = group.counts[i]!;
      counts.set(value, (counts.get(value) ?? 0) + 1);
    }
  }
  const totals: HourlyTotal[] = [];
  const dimensions: DimensionCount[] = [];
  for (const { total, visitors, counts } of groups.values()) {
    totals.push({ ...total, visitors: [...visitors] });
    counts.forEach((values, i) => {
      for (const [value, count] of values) {
        dimensions.push({ linkId: total.linkId, bucket: total.bucket, dimension: CLICK_DIMENSIONS[i]!, value, clicks: count });
      }
    });
  }
  return { batchId, receivedClicks, totals, dimensions };
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
