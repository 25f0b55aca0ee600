import type postgres from 'postgres';
import type { TimeBucket } from '../schemas/analytics.js';
import { DIMENSION_NAMES, type DimensionName } from '../analytics/dimensions.js';
import { COMBINATION_COLUMNS } from '../analytics/combinations.js';
import type { AnalyticsFilter } from '../analytics/filters.js';
import { APP_EVENT_NAMES, type AppEventName } from '../queue/app-events.js';
import { appEventConditions, combinationConditions } from './click-filter-sql.js';
import type { Sql } from './client.js';

/** A report range: whole UTC hours, start inclusive, end exclusive, grouped by `timeBucket`. */
export interface ReportRange {
  start: Date;
  end: Date;
  timeBucket: TimeBucket;
  /**
   * IANA zone whose local midnights start day, week and month buckets; UTC when absent. The zone
   * must be a whole number of hours from UTC over the range (the caller checks), so hour buckets
   * are UTC hours whatever the zone.
   */
  timezone?: string;
}

/**
 * Clicks of one dimension value (or of everything, for `total`) in one bucket; or, with an app
 * event as the dimension, that event's count on one platform (the value).
 */
export interface BucketCount {
  bucket: Date;
  dimension: DimensionName | 'total' | AppEventName;
  value: string;
  clicks: number;
}

/**
 * One bucket of one link for the wide export: totals, its counts per dimension value and its app
 * events per event and platform, each as parallel arrays.
 */
export interface WideBucket {
  bucket: Date;
  clicks: number;
  uniqueClicks: number;
  dimensions: string[];
  values: string[];
  counts: number[];
  events: string[];
  eventPlatforms: string[];
  eventCounts: number[];
}

/** Clicks of one dimension value over a whole range. */
export interface DimensionTotal {
  dimension: DimensionName;
  value: string;
  clicks: number;
}

/** The click figures of one link's report: totals, previews, the series (starts in epoch seconds, as arrays) and the counts per dimension value. */
interface ClickFigures {
  totalClicks: number;
  uniqueClicks: number;
  previews: number;
  starts: number[] | null;
  clicks: number[] | null;
  uniques: number[] | null;
  dimensions: DimensionTotal[];
}

/** Reads the click figures of one link's report in one snapshot (`tx`). */
type ClickReader = (
  tx: postgres.TransactionSql,
  linkId: string,
  range: ReportRange,
  dimensions: readonly DimensionName[],
  filter: AnalyticsFilter,
) => Promise<ClickFigures>;

/** App events of one kind on one platform over a whole range. */
export interface AppEventTotal {
  event: string;
  platform: string;
  count: number;
  /** Distinct visitors (or installs, or opens) among them: their sketches merged over the range and links. */
  uniques: number;
}

/** The raw numbers of one link's report, all read from one snapshot. */
export interface LinkReportData {
  totalClicks: number;
  uniqueClicks: number;
  /** Visits of link-preview crawlers in the range (never among the clicks). */
  previews: number;
  /** Clicks per bucket start (epoch ms), for the buckets that had any; the caller zero-fills the rest. */
  series: Map<number, number>;
  /** Distinct visitors per bucket start, the bucket's hourly (or daily) sketches merged; same keys as `series`. */
  uniqueSeries: Map<number, number>;
  dimensions: DimensionTotal[];
  /** App events in the range, by event and platform. */
  appEvents: AppEventTotal[];
  /** App events of each bucket that had any, each event summed over its platforms; the caller zero-fills the rest. */
  appEventSeries: AppEventSeries;
}

/**
 * App events per bucket: the buckets' starts (epoch ms) and, per event, its count in each of them
 * (all platforms together), and in `uniques` its distinct visitors there (the bucket's sketches of
 * every platform merged).
 */
export type AppEventSeries = { starts: number[]; uniques: Record<AppEventName, number[]> } & Record<AppEventName, number[]>;

/** The column of an event's unique count in the per-bucket statements. */
const uniqueColumn = (name: AppEventName) => `unique_${name}`;

/** A value for every event. */
const perEvent = <T>(of: (name: AppEventName) => T) =>
  Object.fromEntries(APP_EVENT_NAMES.map((name) => [name, of(name)])) as Record<AppEventName, T>;

/** Account-wide numbers of one user. */
export interface AccountSummaryData {
  totalLinks: number;
  activeLinks: number;
  totalClicks: number;
  topLinks: { id: string; title: string; clicks: number }[];
  /** Clicks per value of the requested dimensions, over the same links and clicks as totalClicks. */
  dimensions: DimensionTotal[];
  /** App events over the same links and range, by event and platform; read with the dimensions only (none without). */
  appEvents: AppEventTotal[];
}

/** The value of the `total` rows of an export. */
export const TOTAL_VALUE = 'all';

const DAY_MS = 86_400_000;

/** The part of a range read from daily rows: whole UTC days, start inclusive, end exclusive. */
interface WholeDays {
  start: Date;
  end: Date;
}

/**
 * The whole UTC days inside a range; the hours before and after them are read from hourly rows.
 * A range that holds no whole day is read from hourly rows only (an empty span at its end).
 */
export function wholeDaysOf({ start, end }: Pick<ReportRange, 'start' | 'end'>): WholeDays {
  const first = Math.ceil(start.getTime() / DAY_MS) * DAY_MS;
  const last = Math.floor(end.getTime() / DAY_MS) * DAY_MS;
  return first < last ? { start: new Date(first), end: new Date(last) } : { start: end, end };
}

const isoDay = (date: Date) => date.toISOString().slice(0, 10);

/** The zone buckets are cut in: hours are always UTC hours (the zone is whole hours from UTC). */
const bucketZone = ({ timeBucket, timezone }: Pick<ReportRange, 'timeBucket' | 'timezone'>) =>
  timeBucket === 'hour' || !timezone ? 'UTC' : timezone;

/**
 * The spans of a range read from daily rows when rows are grouped into its buckets: the whole UTC
 * days, unless buckets are hours or start at another zone's midnight (daily rows are UTC days).
 */
export const bucketedDaysOf = (range: ReportRange): WholeDays =>
  range.timeBucket === 'hour' || bucketZone(range) !== 'UTC' ? { start: range.end, end: range.end } : wholeDaysOf(range);

/**
 * Read-only queries over the rollups (and links, for the summary). A range is read from the daily
 * tables for its whole UTC days and from the hourly tables for the hours at either edge, so a year
 * costs 365 rows per value instead of 8,760; the daily rows are sums (and sketch unions) of the
 * hourly ones written in the same transaction, so both ways give the same numbers. Bucketing
 * happens on UTC wall-clock time (`AT TIME ZONE 'UTC'`), so days, ISO weeks and months never
 * depend on the session's TimeZone; every range condition is on the tables' primary keys.
 */
export function analyticsRepository(sql: Sql) {
  /**
   * Start of the bucket that contains a row's `bucket`, as timestamptz: truncated on the wall
   * clock of the range's zone, so days start at its local midnight whatever their length.
   */
  const bucketOf = (range: Pick<ReportRange, 'timeBucket' | 'timezone'>) => {
    const zone = bucketZone(range);
    return sql`(date_trunc(${range.timeBucket}::text, bucket AT TIME ZONE ${zone}::text) AT TIME ZONE ${zone}::text)`;
  };

  /** Every bucket start of the range, including the first bucket when it starts before the range. */
  const bucketSeries = (range: ReportRange) => {
    const { start, end, timeBucket } = range;
    const zone = bucketZone(range);
    // Stepping on the wall clock, then back to instants: a local day is one step even when it lasts 23 or 25 hours.
    return sql`
      SELECT generate_series(
        date_trunc(${timeBucket}::text, ${start}::timestamptz AT TIME ZONE ${zone}::text),
        (${end}::timestamptz AT TIME ZONE ${zone}::text) - interval '1 microsecond',
        ${`1 ${timeBucket}`}::interval) AT TIME ZONE ${zone}::text AS bucket`;
  };

  /**
   * `columns` of one link's rows in the range, each with `bucket` (its hour, or its day's start):
   * daily rows for `days`, hourly rows before and after them. Three range scans on primary keys.
   */
  const rangeRows = (
    tables: { hourly: string; daily: string },
    columns: string[],
    where: postgres.Fragment,
    { start, end }: ReportRange,
    days: WholeDays,
  ) => sql`
    SELECT ${sql(columns)}, day::timestamp AT TIME ZONE 'UTC' AS bucket FROM ${sql(tables.daily)}
    WHERE ${where} AND day >= ${isoDay(days.start)}::date AND day < ${isoDay(days.end)}::date
    UNION ALL
    SELECT ${sql(columns)}, bucket FROM ${sql(tables.hourly)} WHERE ${where} AND bucket >= ${start} AND bucket < ${days.start}
    UNION ALL
    SELECT ${sql(columns)}, bucket FROM ${sql(tables.hourly)} WHERE ${where} AND bucket >= ${days.end} AND bucket < ${end}`;

  const TOTALS = { hourly: 'click_hourly', daily: 'click_daily' };
  const DIMENSIONS = { hourly: 'click_hourly_dimensions', daily: 'click_daily_dimensions' };
  // Daily combination rows are written once a day is over (rollCombinationDays); the view adds
  // the days not rolled yet, summed from their hourly rows (migration 019).
  const COMBINATIONS = { hourly: 'click_hourly_combinations', daily: 'click_daily_combinations_read' };
  const APP_EVENTS = { hourly: 'app_event_hourly', daily: 'app_event_daily' };

  /**
   * App events summed by event and platform over the range, of the links `where` names. The range
   * is instants, so its whole UTC days come from daily rows and its edges from hourly ones
   * whatever the report's zone: the totals follow the zone exactly as the clicks' do.
   */
  const appEventTotals = (tx: Sql | postgres.TransactionSql, where: postgres.Fragment, range?: Pick<ReportRange, 'start' | 'end'>) =>
    tx<AppEventTotal[]>`
      SELECT event, platform, sum(count)::bigint AS count, round(hll_cardinality(hll_union_agg(visitors)))::bigint AS uniques
      FROM (${
        range
          ? rangeRows(APP_EVENTS, ['event', 'platform', 'count', 'visitors'], where, { ...range, timeBucket: 'day' }, wholeDaysOf(range))
          : sql`SELECT event, platform, count, visitors FROM app_event_daily WHERE ${where}`
      }) r
      GROUP BY event, platform`;

  /**
   * One link's app event rows of the range, each with the start of its bucket, read like the
   * clicks: hourly rows for hour buckets and for days of a zone off UTC, daily rows for whole UTC
   * days otherwise. An hourly row's bucket is already its hour bucket: no truncation per row.
   */
  const appEventRows = (linkId: string, range: ReportRange, filter: AnalyticsFilter) => sql`
    SELECT ${range.timeBucket === 'hour' ? sql`bucket` : bucketOf(range)} AS bucket, event, platform, count
    FROM (${rangeRows(APP_EVENTS, ['event', 'platform', 'count'], appEventsOf(linkId, filter), range, bucketedDaysOf(range))}) r`;

  /**
   * One link's app events per bucket of the range, a column per event (all platforms together),
   * and one per event of its distinct visitors. The rows are first summed (and their sketches
   * merged) per hour (or UTC day) they were stored under, then those are put in their buckets: the
   * truncation to a bucket runs once per hour, not once per event row. A bucket's unique count is
   * the cardinality of its merged sketches, never a sum of its hours' counts.
   */
  const appEventsPerBucket = (linkId: string, range: ReportRange, filter: AnalyticsFilter) => {
    const cardinality = (sketch: postgres.Fragment) => sql`coalesce(round(hll_cardinality(${sketch})), 0)::bigint`;
    const merged = (name: AppEventName) => sql`hll_union_agg(visitors) FILTER (WHERE event = ${name})`;
    const stored = rangeRows(APP_EVENTS, ['event', 'count', 'visitors'], appEventsOf(linkId, filter), range, bucketedDaysOf(range));
    // An hourly row's bucket is already its hour bucket.
    if (range.timeBucket === 'hour') {
      return sql`
        SELECT bucket ${APP_EVENT_NAMES.map((name) => sql`, coalesce(sum(count) FILTER (WHERE event = ${name}), 0)::bigint AS ${sql(name)}`)}
               ${APP_EVENT_NAMES.map((name) => sql`, ${cardinality(merged(name))} AS ${sql(uniqueColumn(name))}`)}
        FROM (${stored}) r
        GROUP BY bucket`;
    }
    const perStoredBucket = sql`
      SELECT bucket ${APP_EVENT_NAMES.map((name) => sql`, coalesce(sum(count) FILTER (WHERE event = ${name}), 0)::bigint AS ${sql(name)}`)}
             ${APP_EVENT_NAMES.map((name) => sql`, ${merged(name)} AS ${sql(uniqueColumn(name))}`)}
      FROM (${stored}) r
      GROUP BY bucket`;
    return sql`
      SELECT ${bucketOf(range)} AS bucket ${APP_EVENT_NAMES.map((name) => sql`, sum(${sql(name)})::bigint AS ${sql(name)}`)}
             ${APP_EVENT_NAMES.map((name) => sql`, ${cardinality(sql`hll_union_agg(${sql(uniqueColumn(name))})`)} AS ${sql(uniqueColumn(name))}`)}
      FROM (${perStoredBucket}) h
      GROUP BY 1`;
  };

  /** One link's app events per bucket, event and platform (the exports' rows). */
  const appEventBuckets = (linkId: string, range: ReportRange, filter: AnalyticsFilter) => sql`
    SELECT bucket, event, platform, sum(count)::bigint AS count FROM (${appEventRows(linkId, range, filter)}) r GROUP BY 1, 2, 3`;

  /** The condition on one link's app event rows: under platform filters, those platforms' events only. */
  const appEventsOf = (linkId: string, filter: AnalyticsFilter) => sql`link_id = ${linkId} ${appEventConditions(sql, filter)}`;

  /**
   * Clicks (and visitor sketches) of one link in the range: all of them from the totals rollups, or
   * under a filter the matching ones from the combination rollups.
   */
  const totalRows = (linkId: string, columns: string[], range: ReportRange, days: WholeDays, filter: AnalyticsFilter) =>
    filter.length === 0
      ? rangeRows(TOTALS, columns, sql`link_id = ${linkId}`, range, days)
      : rangeRows(COMBINATIONS, columns, sql`link_id = ${linkId} ${combinationConditions(sql, filter)}`, range, days);

  /**
   * Clicks per value of `dimensions` (`dimension`, `value`, `clicks`), of the links `where` names,
   * over `range` (whole UTC days from daily rows) or, without one, all time (daily rows); grouped
   * by `bucket` too when it is given (an expression of the rows' `bucket`), as the first column.
   *
   * Without a filter they come from the per-dimension rollups, where the dimension is a key column
   * and so part of every scan's condition. Under a filter, from the matching combination rows:
   * summed per combination (and bucket) first, so that a year of daily rows folds into the
   * combinations the links had before each is counted once per dimension.
   */
  const valueCounts = ({
    where,
    dimensions,
    filter,
    range,
    bucket,
  }: {
    where: postgres.Fragment;
    dimensions: readonly DimensionName[];
    filter: AnalyticsFilter;
    range?: ReportRange;
    bucket?: postgres.Fragment;
  }) => {
    const days = range && (bucket ? bucketedDaysOf(range) : wholeDaysOf(range));
    const byBucket = bucket ? sql`1,` : sql``;
    const read = (tables: { hourly: string; daily: string }, columns: string[], condition: postgres.Fragment) =>
      range
        ? rangeRows(tables, columns, condition, range, days!)
        : sql`SELECT ${sql(columns)} FROM ${sql(tables.daily)} WHERE ${condition}`;
    if (filter.length === 0) {
      const rows = read(DIMENSIONS, ['dimension', 'value', 'clicks'], sql`${where} AND dimension = ANY(${dimensions as string[]}::text[])`);
      return sql`
        SELECT ${bucket ? sql`${bucket} AS bucket,` : sql``} dimension, value, sum(clicks)::bigint AS clicks
        FROM (${rows}) r GROUP BY ${byBucket} dimension, value`;
    }
    const rows = read(COMBINATIONS, [...COMBINATION_COLUMNS, 'clicks'], sql`${where} ${combinationConditions(sql, filter)}`);
    const perDimension = dimensions.map((name, i) => sql`${i === 0 ? sql`` : sql`,`} (${name}::text, c.${sql(name)})`);
    return sql`
      SELECT ${bucket ? sql`c.bucket,` : sql``} d.dimension, d.value, sum(c.clicks)::bigint AS clicks
      FROM (
        SELECT ${bucket ? sql`${bucket} AS bucket,` : sql``} ${sql(COMBINATION_COLUMNS)}, sum(clicks) AS clicks
        FROM (${rows}) r GROUP BY ${byBucket} ${sql(COMBINATION_COLUMNS)}
      ) c
      CROSS JOIN LATERAL (VALUES ${perDimension}) d(dimension, value)
      GROUP BY ${byBucket} d.dimension, d.value`;
  };

  /** Visits of link-preview crawlers to one link in the range. */
  const previewsOf = (linkId: string, { start, end }: ReportRange) => sql`
    (SELECT coalesce(sum(previews), 0)::bigint FROM link_previews_hourly WHERE link_id = ${linkId} AND bucket >= ${start} AND bucket < ${end})`;

  /**
   * The clicks of one link in the range, in three statements: the totals and the breakdowns over
   * the range (whole days from daily rows), and the series. Without a filter each reads the rollups
   * made for it (totals and per-dimension rows); under one, the matching combination rows.
   */
  const clicksApart: ClickReader = async (tx, linkId, range, dimensions, filter) => {
    const { start, end, timeBucket } = range;
    const days = wholeDaysOf(range);
    const [[totals], [perBucket], counts] = await Promise.all([
      // Unique clicks: the sketches merged over the whole range, never a sum of per-day uniques.
      tx<{ totalClicks: number; uniqueClicks: number; previews: number }[]>`
        SELECT coalesce(sum(clicks), 0)::bigint AS "totalClicks",
               coalesce(round(hll_cardinality(hll_union_agg(visitors))), 0)::bigint AS "uniqueClicks",
               ${previewsOf(linkId, range)} AS previews
        FROM (${totalRows(linkId, ['clicks', 'visitors'], range, days, filter)}) r`,
      // Arrays instead of a row per bucket: a year by hour is 8760 buckets, and decoding rows
      // one by one costs more than the query itself. Hours come from the hourly rows only, and
      // so do the days of a zone other than UTC. Unique visitors: the bucket's sketches merged.
      tx<{ starts: number[] | null; clicks: number[] | null; uniques: number[] | null }[]>`
        SELECT array_agg(date_part('epoch', bucket)::bigint) AS starts, array_agg(clicks) AS clicks, array_agg(uniques) AS uniques
        FROM (${
          timeBucket === 'hour' && filter.length === 0
            ? sql`SELECT bucket, clicks, round(hll_cardinality(visitors))::bigint AS uniques
                FROM click_hourly WHERE link_id = ${linkId} AND bucket >= ${start} AND bucket < ${end}`
            : timeBucket === 'hour'
              ? // An hour's matching combinations, summed and their sketches merged.
                sql`SELECT bucket, sum(clicks)::bigint AS clicks, round(hll_cardinality(hll_union_agg(visitors)))::bigint AS uniques
                  FROM click_hourly_combinations
                  WHERE link_id = ${linkId} ${combinationConditions(sql, filter)} AND bucket >= ${start} AND bucket < ${end}
                  GROUP BY bucket`
              : sql`SELECT ${bucketOf(range)} AS bucket, sum(clicks)::bigint AS clicks,
                       coalesce(round(hll_cardinality(hll_union_agg(visitors))), 0)::bigint AS uniques
                FROM (${totalRows(linkId, ['clicks', 'visitors'], range, bucketedDaysOf(range), filter)}) r GROUP BY 1`
        }) b`,
      tx<DimensionTotal[]>`${valueCounts({ where: sql`link_id = ${linkId}`, dimensions, filter, range })}`,
    ]);
    return { ...totals!, ...perBucket!, dimensions: [...counts] };
  };

  /**
   * The clicks of one link in the range that match `filter`, from the combination rollups, in one
   * statement (for filters that name values to keep; see linkReport): the matching rows are read once (those the series needs: hourly rows for hour
   * buckets and other zones' days, daily rows for whole UTC days otherwise) and the totals, the
   * series and the breakdowns are all computed from them. Daily rows are the sums and sketch
   * unions of hourly ones, so any of them gives the same numbers; reading the link's combinations
   * three times (a year by hour is some 350,000 hourly and 270,000 daily rows on a busy link)
   * cost three times the scan.
   */
  const clicksTogether: ClickReader = async (tx, linkId, range, dimensions, filter) => {
    const stored = rangeRows(
      COMBINATIONS,
      [...COMBINATION_COLUMNS, 'clicks', 'visitors'],
      sql`link_id = ${linkId} ${combinationConditions(sql, filter)}`,
      range,
      bucketedDaysOf(range),
    );
    const perDimension = dimensions.map((name, i) => sql`${i === 0 ? sql`` : sql`,`} (${name}::text, c.${sql(name)})`);
    const [row] = await tx<(Omit<ClickFigures, 'dimensions'> & { dimensions: string[] | null; values: string[]; counts: number[] })[]>`
      WITH matching AS MATERIALIZED (${stored}),
      per_bucket AS MATERIALIZED (
        -- An hourly row's bucket is already its hour bucket.
        SELECT ${range.timeBucket === 'hour' ? sql`bucket` : bucketOf(range)} AS bucket, sum(clicks)::bigint AS clicks,
               hll_union_agg(visitors) AS visitors
        -- Sorted, so each bucket's sketches are merged and let go before the next: hashing holds every
        -- bucket's merged sketch (kilobytes each) at once and spilled to disk on a year by hour.
        FROM (SELECT * FROM matching ORDER BY bucket) m GROUP BY 1
      ),
      per_value AS (
        SELECT d.dimension, d.value, sum(c.clicks)::bigint AS clicks
        FROM (SELECT ${sql(COMBINATION_COLUMNS)}, sum(clicks) AS clicks FROM matching GROUP BY ${sql(COMBINATION_COLUMNS)}) c
        CROSS JOIN LATERAL (VALUES ${perDimension}) d(dimension, value)
        GROUP BY 1, 2
      )
      SELECT t."totalClicks", t."uniqueClicks", ${previewsOf(linkId, range)} AS previews,
             b.starts, b.clicks, b.uniques, v.dimensions, v.values, v.counts
      FROM (SELECT coalesce(sum(clicks), 0)::bigint AS "totalClicks",
                   coalesce(round(hll_cardinality(hll_union_agg(visitors))), 0)::bigint AS "uniqueClicks"
            FROM per_bucket) t,
           (SELECT array_agg(date_part('epoch', bucket)::bigint) AS starts, array_agg(clicks) AS clicks,
                   array_agg(round(hll_cardinality(visitors))::bigint) AS uniques
            FROM per_bucket) b,
           (SELECT array_agg(dimension) AS dimensions, array_agg(value) AS values, array_agg(clicks) AS counts FROM per_value) v`;
    const { dimensions: names, values, counts, ...figures } = row!;
    return {
      ...figures,
      dimensions: (names ?? []).map((dimension, i) => ({ dimension: dimension as DimensionName, value: values[i]!, clicks: counts[i]! })),
    };
  };

  return {
    /** Totals, merged unique visitors, clicks per bucket and per value of `dimensions`. */
    async linkReport(
      linkId: string,
      range: ReportRange,
      dimensions: readonly DimensionName[],
      filter: AnalyticsFilter = [],
    ): Promise<LinkReportData> {
      // One read-only snapshot, so the totals, the series and the breakdowns always agree even
      // while the worker is adding clicks.
      return sql.begin('isolation level repeatable read read only', async (tx) => {
        // Plan each statement for its own range. After five runs PostgreSQL may switch to a plan
        // cached for any range, which guesses a handful of rows and then sorts a year's breakdown
        // (tens of thousands of rows) instead of hashing it: three times slower.
        await tx`SET LOCAL plan_cache_mode = force_custom_plan`;
        const [clicks, appEvents, [eventSeries]] = await Promise.all([
          // A filter naming values to keep matches a share of the rows, which one statement reads once
          // and keeps for the totals, the series and the breakdowns (a year by hour under two such
          // filters: 60 ms instead of 105). One naming only values to leave out keeps most rows, and
          // keeping them costs more than reading them again (a year by hour keeping 80 %: 880 ms
          // instead of 410): separate statements then, as without a filter.
          filter.some(({ negated }) => !negated)
            ? clicksTogether(tx, linkId, range, dimensions, filter)
            : clicksApart(tx, linkId, range, dimensions, filter),
          appEventTotals(tx, appEventsOf(linkId, filter), range),
          // Arrays again, as for the clicks, one per event: a row per bucket, its events side by side
          // (a year by hour with every event is 8,760 rows, not 35,040 to decode and match up).
          tx<Record<string, number[] | null>[]>`
            SELECT array_agg(date_part('epoch', bucket)::bigint * 1000) AS starts
                   ${APP_EVENT_NAMES.map((name) => sql`, array_agg(${sql(name)}) AS ${sql(name)}`)}
                   ${APP_EVENT_NAMES.map((name) => sql`, array_agg(${sql(uniqueColumn(name))}) AS ${sql(uniqueColumn(name))}`)}
            FROM (${appEventsPerBucket(linkId, range, filter)}) b`,
        ]);
        return {
          totalClicks: clicks.totalClicks,
          uniqueClicks: clicks.uniqueClicks,
          previews: clicks.previews,
          series: new Map((clicks.starts ?? []).map((seconds, i) => [seconds * 1000, clicks.clicks![i]!])),
          uniqueSeries: new Map((clicks.starts ?? []).map((seconds, i) => [seconds * 1000, clicks.uniques![i]!])),
          dimensions: clicks.dimensions,
          appEvents: [...appEvents],
          appEventSeries: {
            starts: eventSeries!.starts ?? [],
            ...perEvent((name) => eventSeries![name] ?? []),
            uniques: perEvent((name) => eventSeries![uniqueColumn(name)] ?? []),
          },
        };
      });
    },

    /**
     * Every bucket of the range with its total (zero-filled), followed by that bucket's counts per
     * dimension value, then its app events per event (as the dimension) and platform (as the
     * value), read through a cursor `batchSize` rows at a time. Hour buckets are read from hourly
     * rows only; coarser ones from daily rows for whole days.
     */
    exportRows(linkId: string, range: ReportRange, filter: AnalyticsFilter = [], batchSize = 1000): AsyncIterable<BucketCount[]> {
      const days = bucketedDaysOf(range);
      return sql<BucketCount[]>`
        SELECT bucket, dimension, value, clicks FROM (
          SELECT s.bucket, 0 AS part, 'total' AS dimension, ${TOTAL_VALUE}::text AS value, coalesce(t.clicks, 0)::bigint AS clicks
          FROM (${bucketSeries(range)}) s
          LEFT JOIN (
            SELECT ${bucketOf(range)} AS bucket, sum(clicks)::bigint AS clicks
            FROM (${totalRows(linkId, ['clicks'], range, days, filter)}) r GROUP BY 1
          ) t USING (bucket)
          UNION ALL
          SELECT bucket, 1, dimension, value, clicks
          FROM (${valueCounts({ where: sql`link_id = ${linkId}`, dimensions: DIMENSION_NAMES, filter, range, bucket: bucketOf(range) })}) v
          UNION ALL
          -- The events after the clicks, in the funnel's order (APP_EVENT_NAMES).
          SELECT bucket, 1 + array_position(${[...APP_EVENT_NAMES]}::text[], event), event, platform, count
          FROM (${appEventBuckets(linkId, range, filter)}) e
        ) rows
        -- Byte order (COLLATE "C"), so the file is the same whatever the database's locale.
        ORDER BY bucket, part, dimension COLLATE "C", value COLLATE "C"`.cursor(batchSize);
    },

    /**
     * Every bucket of the range (zero-filled), in order, with its clicks, merged unique visitors and
     * counts per dimension value, read through a cursor `batchSize` buckets at a time.
     */
    wideRows(linkId: string, range: ReportRange, filter: AnalyticsFilter = [], batchSize = 1000): AsyncIterable<WideBucket[]> {
      const days = bucketedDaysOf(range);
      return sql<WideBucket[]>`
        SELECT s.bucket, coalesce(t.clicks, 0)::bigint AS clicks, coalesce(t.uniques, 0)::bigint AS "uniqueClicks",
               coalesce(d.dimensions, '{}') AS dimensions, coalesce(d.values, '{}') AS values, coalesce(d.counts, '{}') AS counts,
               coalesce(e.events, '{}') AS events, coalesce(e.platforms, '{}') AS "eventPlatforms", coalesce(e.counts, '{}') AS "eventCounts"
        FROM (${bucketSeries(range)}) s
        LEFT JOIN (
          SELECT ${bucketOf(range)} AS bucket, sum(clicks)::bigint AS clicks, round(hll_cardinality(hll_union_agg(visitors)))::bigint AS uniques
          FROM (${totalRows(linkId, ['clicks', 'visitors'], range, days, filter)}) r GROUP BY 1
        ) t USING (bucket)
        LEFT JOIN (
          SELECT bucket, array_agg(dimension) AS dimensions, array_agg(value) AS values, array_agg(clicks) AS counts
          FROM (${valueCounts({ where: sql`link_id = ${linkId}`, dimensions: DIMENSION_NAMES, filter, range, bucket: bucketOf(range) })}) v
          GROUP BY bucket
        ) d USING (bucket)
        LEFT JOIN (
          SELECT bucket, array_agg(event) AS events, array_agg(platform) AS platforms, array_agg(count) AS counts
          FROM (${appEventBuckets(linkId, range, filter)}) a GROUP BY bucket
        ) e USING (bucket)
        ORDER BY s.bucket`.cursor(batchSize);
    },

    /** Clicks per value of `dimensions` over the range, summed over several links (whole UTC days from daily rows). */
    async dimensionTotals(
      linkIds: readonly string[],
      range: Pick<ReportRange, 'start' | 'end'>,
      dimensions: readonly DimensionName[],
      filter: AnalyticsFilter = [],
    ): Promise<DimensionTotal[]> {
      if (linkIds.length === 0) return [];
      return sql<DimensionTotal[]>`${valueCounts({
        where: sql`link_id = ANY(${linkIds as string[]}::uuid[])`,
        dimensions,
        filter,
        range: { ...range, timeBucket: 'day' },
      })}`;
    },

    /**
     * Link counts, clicks, the five most-clicked links and the clicks per value of `dimensions` of
     * one user (with the app events of the same links when `dimensions` are asked for), from one snapshot: of the links carrying `filter.tag` when given, clicks within
     * `filter.range` when given (else all time, from the daily rows), and only the clicks matching
     * `filter.clicks` when it has filters (from the combination rollups).
     */
    async accountSummary(
      userId: string,
      filter: { tag?: string; range?: Pick<ReportRange, 'start' | 'end'>; clicks?: AnalyticsFilter } = {},
      dimensions: readonly DimensionName[] = [],
    ): Promise<AccountSummaryData> {
      const { tag, range, clicks: clickFilter = [] } = filter;
      const ownLinks = sql`l.user_id = ${userId} ${tag === undefined ? sql`` : sql`AND l.tags @> ARRAY[${tag}]::text[]`}`;
      const [tables, matching] =
        clickFilter.length === 0 ? [TOTALS, sql``] : [COMBINATIONS, sql`${combinationConditions(sql, clickFilter)}`];
      const clicks = range
        ? sql`(SELECT sum(r.clicks) FROM (${rangeRows(tables, ['clicks'], sql`link_id = l.id ${matching}`, { ...range, timeBucket: 'day' }, wholeDaysOf(range))}) r)`
        : sql`(SELECT sum(d.clicks) FROM ${sql(tables.daily)} d WHERE d.link_id = l.id ${matching})`;
      // The links as an array, not a join, so every scan stays on the primary key (link_id first).
      const linkIds = sql`link_id = ANY(ARRAY(SELECT l.id FROM links l WHERE ${ownLinks}))`;
      const dimensionCounts = valueCounts({
        where: linkIds,
        dimensions,
        filter: clickFilter,
        range: range && { ...range, timeBucket: 'day' },
      });
      // One read-only snapshot, so the breakdowns add up to totalClicks even while the worker writes.
      return sql.begin('isolation level repeatable read read only', async (tx) => {
        const [[row], counts, appEvents] = await Promise.all([
          tx<Omit<AccountSummaryData, 'dimensions'>[]>`
            WITH per_link AS (
              SELECT l.id, l.title, l.expires_at, coalesce(${clicks}, 0)::bigint AS clicks
              FROM links l
              WHERE ${ownLinks}
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
            FROM per_link`,
          dimensions.length === 0 ? [] : tx<DimensionTotal[]>`${dimensionCounts}`,
          dimensions.length === 0 ? [] : appEventTotals(tx, sql`${linkIds} ${appEventConditions(sql, clickFilter)}`, range),
        ]);
        return { ...row!, dimensions: [...counts], appEvents: [...appEvents] };
      });
    },
  };
}
export type AnalyticsRepository = ReturnType<typeof analyticsRepository>;
