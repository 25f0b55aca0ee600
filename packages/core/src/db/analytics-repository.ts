import type { TimeBucket } from '../schemas/analytics.js';
import type { Sql } from './client.js';
import { CLICK_DIMENSIONS, type ClickDimension } from './rollups-repository.js';

/** A report range: whole UTC hours, start inclusive, end exclusive, grouped by `timeBucket`. */
export interface ReportRange {
  start: Date;
  end: Date;
  timeBucket: TimeBucket;
}

/** Clicks of one dimension value (or of everything, for `total`) in one bucket. */
export interface BucketCount {
  bucket: Date;
  dimension: ClickDimension | 'total';
  value: string;
  clicks: number;
}

/** Clicks of one dimension value over a whole range. */
export interface DimensionTotal {
  dimension: ClickDimension;
  value: string;
  clicks: number;
}

/** The raw numbers of one link's report, all read from one snapshot. */
export interface LinkReportData {
  totalClicks: number;
  uniqueClicks: number;
  /** Clicks per bucket start (epoch ms), for the buckets that had any; the caller zero-fills the rest. */
  series: Map<number, number>;
  dimensions: DimensionTotal[];
  /**
   * Names the breakdown: link, range and dimensions, plus the range's click total and hourly row
   * count. Rollup rows are only ever added to (a link's rows go with the link), so while those
   * are unchanged so is every breakdown of the range.
   */
  fingerprint: string;
}

/** Account-wide numbers of one user. */
export interface AccountSummaryData {
  totalLinks: number;
  activeLinks: number;
  totalClicks: number;
  topLinks: { id: string; title: string; clicks: number }[];
}

/** The value of the `total` rows of an export. */
export const TOTAL_VALUE = 'all';

/**
 * Read-only queries over the hourly rollups (and links, for the summary). Bucketing happens on
 * UTC wall-clock time (`AT TIME ZONE 'UTC'`), so days, ISO weeks and months never depend on the
 * session's TimeZone; every range condition is on the rollups' primary keys.
 */
export function analyticsRepository(sql: Sql) {
  /** Start of the UTC bucket that contains a rollup row's hour, as timestamptz. */
  const bucketOf = (unit: TimeBucket) => sql`(date_trunc(${unit}::text, bucket AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')`;

  /** Every bucket start of the range, including the first bucket when it starts before the range. */
  const bucketSeries = ({ start, end, timeBucket }: ReportRange) => sql`
    SELECT generate_series(
      date_trunc(${timeBucket}::text, ${start}::timestamptz AT TIME ZONE 'UTC'),
      (${end}::timestamptz AT TIME ZONE 'UTC') - interval '1 microsecond',
      ${`1 ${timeBucket}`}::interval) AT TIME ZONE 'UTC' AS bucket`;

  /** Clicks per bucket of one link, only where there were any. */
  const totalsPerBucket = (linkId: string, { start, end, timeBucket }: ReportRange) => sql`
    SELECT ${bucketOf(timeBucket)} AS bucket, sum(clicks)::bigint AS clicks
    FROM click_hourly
    WHERE link_id = ${linkId} AND bucket >= ${start} AND bucket < ${end}
    GROUP BY 1`;

  /** The range condition on click_hourly_dimensions, spelled out per key column so the whole primary key is used. */
  const dimensionRows = (linkId: string, dimensions: readonly ClickDimension[], { start, end }: ReportRange) => sql`
    link_id = ${linkId} AND dimension = ANY(${dimensions as string[]}::text[]) AND bucket >= ${start} AND bucket < ${end}`;

  return {
    /**
     * Totals, merged unique visitors, clicks per bucket and per value of `dimensions`. The
     * breakdown is the expensive part (one row per hour and value); `reuse` may return one
     * computed earlier under the same fingerprint instead of reading it again.
     */
    async linkReport(
      linkId: string,
      range: ReportRange,
      dimensions: readonly ClickDimension[],
      reuse: (fingerprint: string) => DimensionTotal[] | undefined = () => undefined,
    ): Promise<LinkReportData> {
      const { start, end, timeBucket } = range;
      const where = sql`link_id = ${linkId} AND bucket >= ${start} AND bucket < ${end}`;
      // One read-only snapshot, so the totals, the series and the breakdowns always agree even
      // while the worker is adding clicks.
      return sql.begin('isolation level repeatable read read only', async (tx) => {
        const [[totals], [perBucket]] = await Promise.all([
          // Unique clicks: the hourly sketches merged over the whole range, never a sum of per-hour uniques.
          tx<{ totalClicks: number; uniqueClicks: number; fingerprint: string }[]>`
            SELECT coalesce(sum(clicks), 0)::bigint AS "totalClicks",
                   coalesce(round(hll_cardinality(hll_union_agg(visitors))), 0)::bigint AS "uniqueClicks",
                   concat_ws(':', sum(clicks), count(*)) AS fingerprint
            FROM click_hourly WHERE ${where}`,
          // Two arrays instead of a row per bucket: a year by hour is 8760 buckets, and decoding
          // rows one by one costs more than the query itself.
          tx<{ starts: number[] | null; clicks: number[] | null }[]>`
            SELECT array_agg(date_part('epoch', bucket)::bigint) AS starts, array_agg(clicks) AS clicks
            FROM (${timeBucket === 'hour'
              ? sql`SELECT bucket, clicks FROM click_hourly WHERE ${where}`
              : sql`SELECT ${bucketOf(timeBucket)} AS bucket, sum(clicks)::bigint AS clicks FROM click_hourly WHERE ${where} GROUP BY 1`}) b`,
        ]);
        const fingerprint = [linkId, start.toISOString(), end.toISOString(), dimensions.join(','), totals!.fingerprint].join('|');
        const counts = reuse(fingerprint) ?? await tx<DimensionTotal[]>`
          SELECT dimension, value, sum(clicks)::bigint AS clicks
          FROM click_hourly_dimensions
          WHERE ${dimensionRows(linkId, dimensions, range)}
          GROUP BY dimension, value`;
        return {
          totalClicks: totals!.totalClicks,
          uniqueClicks: totals!.uniqueClicks,
          series: new Map((perBucket!.starts ?? []).map((seconds, i) => [seconds * 1000, perBucket!.clicks![i]!])),
          dimensions: [...counts],
          fingerprint,
        };
      });
    },

    /**
     * Every bucket of the range with its total (zero-filled), followed by that bucket's counts per
     * dimension value, read through a cursor `batchSize` rows at a time.
     */
    exportRows(linkId: string, range: ReportRange, batchSize = 1000): AsyncIterable<BucketCount[]> {
      return sql<BucketCount[]>`
        SELECT bucket, dimension, value, clicks FROM (
          SELECT s.bucket, 'total' AS dimension, ${TOTAL_VALUE}::text AS value, coalesce(t.clicks, 0)::bigint AS clicks
          FROM (${bucketSeries(range)}) s LEFT JOIN (${totalsPerBucket(linkId, range)}) t USING (bucket)
          UNION ALL
          SELECT ${bucketOf(range.timeBucket)}, dimension, value, sum(clicks)::bigint
          FROM click_hourly_dimensions
          WHERE ${dimensionRows(linkId, CLICK_DIMENSIONS, range)}
          GROUP BY 1, 2, 3
        ) rows
        -- Byte order (COLLATE "C"), so the file is the same whatever the database's locale.
        ORDER BY bucket, dimension <> 'total', dimension COLLATE "C", value COLLATE "C"`.cursor(batchSize);
    },

    /** Link counts, all-time clicks and the five most-clicked links of one user, from one snapshot. */
    async accountSummary(userId: string): Promise<AccountSummaryData> {
      const [row] = await sql<AccountSummaryData[]>`
        WITH per_link AS (
          SELECT l.id, l.title, l.expires_at,
                 coalesce((SELECT sum(h.clicks) FROM click_hourly h WHERE h.link_id = l.id), 0)::bigint AS clicks
          FROM links l
          WHERE l.user_id = ${userId}
        ), top AS (
          -- Ties go to the title, then the id, so the list is the same on every call.
          SELECT id, title, clicks FROM per_link WHERE clicks > 0 ORDER BY clicks DESC, title, id LIMIT 5
        )
        SELECT count(*)::int AS "totalLinks",
               count(*) FILTER (WHERE expires_at IS NULL OR expires_at > now())::int AS "activeLinks",
               coalesce(sum(clicks), 0)::bigint AS "totalClicks",
               (SELECT coalesce(json_agg(json_build_object('id', id, 'title', title, 'clicks', clicks)
                                         ORDER BY clicks DESC, title, id), '[]')
                FROM top) AS "topLinks"
        FROM per_link`;
      return row!;
    },
  };
}
export type AnalyticsRepository = ReturnType<typeof analyticsRepository>;
