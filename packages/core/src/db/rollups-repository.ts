import type { Sql, TransactionSql } from './client.js';

/** The dimensions click_hourly_dimensions breaks clicks down by. */
export const CLICK_DIMENSIONS = ['platform', 'country', 'browser', 'os', 'device', 'referrer'] as const;
export type ClickDimension = (typeof CLICK_DIMENSIONS)[number];

/** Clicks of one link in one UTC hour, with the distinct visitor hashes seen in it. */
export interface HourlyTotal {
  linkId: string;
  /** Start of the UTC hour, epoch milliseconds. */
  bucket: number;
  clicks: number;
  visitors: string[];
}

/** Clicks of one link in one UTC hour that share one value of one dimension. */
export interface DimensionCount {
  linkId: string;
  bucket: number;
  dimension: ClickDimension;
  value: string;
  clicks: number;
}

/** A click batch already aggregated in memory, ready to be added to the rollups. */
export interface RollupBatch {
  batchId: string;
  /** Clicks the batch carried, bots included; kept with the batch id for auditing. */
  receivedClicks: number;
  /** At most one row per (link, hour). */
  totals: HourlyTotal[];
  /** At most one row per (link, hour, dimension, value). */
  dimensions: DimensionCount[];
}

function entry<K, V>(map: Map<K, V>, key: K, create: () => V): V {
  let value = map.get(key);
  if (value === undefined) map.set(key, (value = create()));
  return value;
}

/**
 * Sums the rows of several batches so each (link, hour) and (link, hour, dimension, value) appears
 * once: one multi-row upsert may not touch the same row twice. Rows are copied, never changed in
 * place, so a batch can be written again on its own. Maps are nested by link and hour rather than
 * keyed by joined strings, which keeps this cheap for tens of thousands of rows.
 */
function mergeRows(batches: RollupBatch[]): Pick<RollupBatch, 'totals' | 'dimensions'> {
  if (batches.length === 1) return batches[0]!;
  const totals = new Map<string, Map<number, HourlyTotal>>();
  const dimensions = new Map<string, Map<number, Map<string, DimensionCount>>>();
  for (const batch of batches) {
    for (const total of batch.totals) {
      const hours = entry(totals, total.linkId, () => new Map<number, HourlyTotal>());
      const merged = hours.get(total.bucket);
      if (!merged) hours.set(total.bucket, { ...total, visitors: [...total.visitors] });
      else {
        merged.clicks += total.clicks;
        // A visitor seen by two batches is added to the sketch twice, which changes nothing.
        for (const visitor of total.visitors) merged.visitors.push(visitor);
      }
    }
    for (const row of batch.dimensions) {
      const hours = entry(dimensions, row.linkId, () => new Map<number, Map<string, DimensionCount>>());
      const values = entry(hours, row.bucket, () => new Map<string, DimensionCount>());
      const key = `${row.dimension}|${row.value}`;
      const merged = values.get(key);
      if (merged) merged.clicks += row.clicks;
      else values.set(key, { ...row });
    }
  }
  return {
    totals: [...totals.values()].flatMap((hours) => [...hours.values()]),
    dimensions: [...dimensions.values()].flatMap((hours) => [...hours.values()].flatMap((values) => [...values.values()])),
  };
}

const isoHour = (bucket: number) => new Date(bucket).toISOString();

/**
 * Hourly click rollups and the record of batches already rolled up. SQL for click_hourly,
 * click_hourly_dimensions and processed_batches is written here and nowhere else.
 */
export function rollupsRepository(sql: Sql) {
  /** Upserts per-hour totals and visitor sketches; rows of deleted links are filtered out by the join. */
  const addTotals = async (tx: TransactionSql, totals: HourlyTotal[]) => {
    if (totals.length === 0) return;
    // Visitors are sent as (group number, hash) pairs so each group's id and hour travel once.
    const groupOf: number[] = [];
    const hashes: string[] = [];
    totals.forEach((total, index) => {
      for (const visitor of total.visitors) {
        groupOf.push(index + 1);
        hashes.push(visitor);
      }
    });
    // Rows are inserted in key order so concurrent transactions lock shared rows in the same
    // order and cannot deadlock each other.
    await tx`
      WITH groups AS (
        SELECT * FROM unnest(${totals.map((t) => t.linkId)}::uuid[], ${totals.map((t) => isoHour(t.bucket))}::timestamptz[],
                             ${totals.map((t) => t.clicks)}::bigint[])
          WITH ORDINALITY AS g(link_id, bucket, clicks, n)
      ), sketches AS (
        SELECT v.n, hll_add_agg(hll_hash_text(v.visitor)) AS visitors
        FROM unnest(${groupOf}::bigint[], ${hashes}::text[]) AS v(n, visitor)
        GROUP BY v.n
      )
      INSERT INTO click_hourly AS t (link_id, bucket, clicks, visitors)
      SELECT g.link_id, g.bucket, g.clicks, coalesce(s.visitors, hll_empty())
      FROM groups g
      JOIN links l ON l.id = g.link_id
      LEFT JOIN sketches s ON s.n = g.n
      ORDER BY g.link_id, g.bucket
      ON CONFLICT (link_id, bucket) DO UPDATE
        SET clicks = t.clicks + excluded.clicks, visitors = hll_union(t.visitors, excluded.visitors)`;
  };

  /** Upserts per-hour dimension counts, skipping links that no longer exist. */
  const addDimensions = async (tx: TransactionSql, rows: DimensionCount[]) => {
    if (rows.length === 0) return;
    await tx`
      INSERT INTO click_hourly_dimensions AS t (link_id, bucket, dimension, value, clicks)
      SELECT d.link_id, d.bucket, d.dimension, d.value, d.clicks
      FROM unnest(${rows.map((r) => r.linkId)}::uuid[], ${rows.map((r) => isoHour(r.bucket))}::timestamptz[],
                  ${rows.map((r) => r.dimension)}::text[], ${rows.map((r) => r.value)}::text[],
                  ${rows.map((r) => r.clicks)}::bigint[]) AS d(link_id, bucket, dimension, value, clicks)
      JOIN links l ON l.id = d.link_id
      ORDER BY d.link_id, d.dimension, d.bucket, d.value
      ON CONFLICT (link_id, dimension, bucket, value) DO UPDATE SET clicks = t.clicks + excluded.clicks`;
  };

  /**
   * Adds batches to the rollups in one transaction, each together with its id; a batch whose id
   * was recorded before is skipped. Returns the ids recorded now.
   */
  const recordBatches = async (batches: RollupBatch[]): Promise<Set<string>> => {
    const unique = [...new Map(batches.map((batch) => [batch.batchId, batch])).values()];
    return sql.begin(async (tx) => {
      const rows = await tx<{ batchId: string }[]>`
        INSERT INTO processed_batches (batch_id, clicks)
        SELECT * FROM unnest(${unique.map((b) => b.batchId)}::text[], ${unique.map((b) => b.receivedClicks)}::int[])
        ORDER BY 1
        ON CONFLICT (batch_id) DO NOTHING
        RETURNING batch_id AS "batchId"`;
      const claimed = new Set(rows.map((row) => row.batchId));
      const fresh = unique.filter((batch) => claimed.has(batch.batchId));
      if (fresh.length > 0) {
        const { totals, dimensions } = mergeRows(fresh);
        await addTotals(tx, totals);
        await addDimensions(tx, dimensions);
      }
      return claimed;
    });
  };

  return {
    recordBatches,

    /**
     * Adds one batch to the rollups in one transaction, unless its id was recorded before.
     * Returns false for a batch already rolled up (a retry or a duplicate delivery).
     */
    async recordBatch(batch: RollupBatch): Promise<boolean> {
      return (await recordBatches([batch])).has(batch.batchId);
    },

    /** Forgets batch ids recorded before `olderThan`; returns how many were removed. */
    async pruneProcessedBatches(olderThan: Date): Promise<number> {
      const result = await sql`DELETE FROM processed_batches WHERE processed_at < ${olderThan}`;
      return result.count;
    },
  };
}
export type RollupsRepository = ReturnType<typeof rollupsRepository>;
