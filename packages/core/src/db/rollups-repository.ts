import type { Sql, TransactionSql } from './client.js';

/** The dimensions click_hourly_dimensions breaks clicks down by. */
export const CLICK_DIMENSIONS = ['platform', 'country', 'browser', 'os', 'device', 'referrer'] as const;
export type ClickDimension = (typeof CLICK_DIMENSIONS)[number];

/** One link's clicks in one UTC hour: the total, the visitor hashes, and counts per dimension value. */
export interface HourlyRollup {
  linkId: string;
  /** Start of the UTC hour, epoch milliseconds. */
  bucket: number;
  clicks: number;
  /** Visitor hashes, for the unique-visitor sketch; repeats are harmless. */
  visitors: string[];
  /** Clicks per value of each dimension, e.g. `counts.country.get('US')`. */
  counts: Record<ClickDimension, Map<string, number>>;
}

/** A click batch already aggregated in memory, ready to be added to the rollups. */
export interface RollupBatch {
  batchId: string;
  /** Clicks the batch carried, bots included; kept with the batch id for auditing. */
  receivedClicks: number;
  hours: HourlyRollup[];
}

/** An HourlyRollup with no clicks yet, for building one up. */
export const emptyHourlyRollup = (linkId: string, bucket: number): HourlyRollup => ({
  linkId,
  bucket,
  clicks: 0,
  visitors: [],
  counts: { platform: new Map(), country: new Map(), browser: new Map(), os: new Map(), device: new Map(), referrer: new Map() },
});

/**
 * Sums the hours of several batches so each (link, hour) appears once: one multi-row upsert may not
 * touch the same row twice. The batches themselves are left as they are.
 */
function mergeHours(batches: RollupBatch[]): HourlyRollup[] {
  if (batches.length === 1) return batches[0]!.hours;
  const merged = new Map<string, HourlyRollup>();
  const copies = new Set<HourlyRollup>();
  for (const batch of batches) {
    for (const hour of batch.hours) {
      const key = `${hour.linkId}|${hour.bucket}`;
      const seen = merged.get(key);
      if (!seen) {
        merged.set(key, hour);
        continue;
      }
      let target = seen;
      if (!copies.has(seen)) {
        target = emptyHourlyRollup(seen.linkId, seen.bucket);
        addHour(target, seen);
        copies.add(target);
        merged.set(key, target);
      }
      addHour(target, hour);
    }
  }
  return [...merged.values()];
}

function addHour(target: HourlyRollup, hour: HourlyRollup): void {
  target.clicks += hour.clicks;
  for (const visitor of hour.visitors) target.visitors.push(visitor);
  for (const dimension of CLICK_DIMENSIONS) {
    const counts = target.counts[dimension];
    for (const [value, clicks] of hour.counts[dimension]) counts.set(value, (counts.get(value) ?? 0) + clicks);
  }
}

const isoHour = (bucket: number) => new Date(bucket).toISOString();

/**
 * Hourly click rollups and the record of batches already rolled up. SQL for click_hourly,
 * click_hourly_dimensions and processed_batches is written here and nowhere else.
 */
export function rollupsRepository(sql: Sql) {
  /** Upserts per-hour totals and visitor sketches; rows of deleted links are filtered out by the join. */
  const addTotals = async (tx: TransactionSql, hours: HourlyRollup[]) => {
    if (hours.length === 0) return;
    // Visitors are sent as (hour number, hash) pairs so each hour's link id and time travel once.
    const hourOf: number[] = [];
    const hashes: string[] = [];
    hours.forEach((hour, index) => {
      for (const visitor of hour.visitors) {
        hourOf.push(index + 1);
        hashes.push(visitor);
      }
    });
    // Rows are inserted in key order so concurrent transactions lock shared rows in the same
    // order and cannot deadlock each other.
    await tx`
      WITH hours AS (
        SELECT * FROM unnest(${hours.map((h) => h.linkId)}::uuid[], ${hours.map((h) => isoHour(h.bucket))}::timestamptz[],
                             ${hours.map((h) => h.clicks)}::bigint[])
          WITH ORDINALITY AS h(link_id, bucket, clicks, n)
      ), sketches AS (
        SELECT v.n, hll_add_agg(hll_hash_text(v.visitor)) AS visitors
        FROM unnest(${hourOf}::bigint[], ${hashes}::text[]) AS v(n, visitor)
        GROUP BY v.n
      )
      INSERT INTO click_hourly AS t (link_id, bucket, clicks, visitors)
      SELECT h.link_id, h.bucket, h.clicks, coalesce(s.visitors, hll_empty())
      FROM hours h
      JOIN links l ON l.id = h.link_id
      LEFT JOIN sketches s ON s.n = h.n
      ORDER BY h.link_id, h.bucket
      ON CONFLICT (link_id, bucket) DO UPDATE
        SET clicks = t.clicks + excluded.clicks, visitors = hll_union(t.visitors, excluded.visitors)`;
  };

  /** Upserts per-hour dimension counts, skipping links that no longer exist. */
  const addDimensions = async (tx: TransactionSql, hours: HourlyRollup[]) => {
    const linkIds: string[] = [];
    const buckets: string[] = [];
    const dimensions: string[] = [];
    const values: string[] = [];
    const clicks: number[] = [];
    for (const hour of hours) {
      const bucket = isoHour(hour.bucket);
      for (const dimension of CLICK_DIMENSIONS) {
        for (const [value, count] of hour.counts[dimension]) {
          linkIds.push(hour.linkId);
          buckets.push(bucket);
          dimensions.push(dimension);
          values.push(value);
          clicks.push(count);
        }
      }
    }
    if (linkIds.length === 0) return;
    await tx`
      INSERT INTO click_hourly_dimensions AS t (link_id, bucket, dimension, value, clicks)
      SELECT d.link_id, d.bucket, d.dimension, d.value, d.clicks
      FROM unnest(${linkIds}::uuid[], ${buckets}::timestamptz[], ${dimensions}::text[], ${values}::text[], ${clicks}::bigint[])
        AS d(link_id, bucket, dimension, value, clicks)
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
        const hours = mergeHours(fresh);
        await addTotals(tx, hours);
        await addDimensions(tx, hours);
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
