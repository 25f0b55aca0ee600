import type { Sql } from './client.js';

/**
 * The partitioned rollup tables (migrations 003, 010, 016 and 017) and the period each partition holds: hourly rows
 * by UTC month, daily rows by UTC year. A partition is named after its parent and period,
 * `click_hourly_p2026_03` or `click_daily_p2026`; the SQL function ensure_rollup_partition
 * creates them.
 */
export const ROLLUP_PARTITIONING = [
  { table: 'click_hourly', period: 'month', column: 'bucket' },
  { table: 'click_hourly_dimensions', period: 'month', column: 'bucket' },
  { table: 'click_daily', period: 'year', column: 'day' },
  { table: 'click_daily_dimensions', period: 'year', column: 'day' },
  { table: 'app_event_hourly', period: 'month', column: 'bucket' },
  { table: 'app_event_daily', period: 'year', column: 'day' },
  { table: 'click_hourly_combinations', period: 'month', column: 'bucket' },
  { table: 'click_daily_combinations', period: 'year', column: 'day' },
  { table: 'click_hourly_combination_referrers', period: 'month', column: 'bucket' },
] as const;

type PartitionedTable = (typeof ROLLUP_PARTITIONING)[number];

/** Months kept of each kind of rollup; 0 keeps them forever. */
export interface RollupRetention {
  hourlyMonths: number;
  dailyMonths: number;
}

/** What one run of the partition maintenance did. */
export interface PartitionMaintenance {
  created: string[];
  dropped: string[];
  /** Daily rows older than the daily retention in the year partition the cutoff falls into. */
  deletedDailyRows: number;
}

const PARTITION_NAME = /^(?<parent>.+)_p(?<year>\d{4})(?:_(?<month>\d{2}))?$/;

/** Start of the UTC month `months` months after the one holding `at` (negative: before). */
export const monthStart = (at: Date, months = 0): Date => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + months, 1));

/**
 * The instant before which a retention of `months` keeps nothing: the start of the UTC month
 * `months` months before the current one, so the current month and `months` whole months before
 * it are kept. Undefined for 0 (keep forever).
 */
export const retentionCutoff = (now: Date, months: number): Date | undefined => (months > 0 ? monthStart(now, -months) : undefined);

/** The end (exclusive) of the period a partition name stands for, or undefined for a name of another shape. */
export function partitionEnd(name: string): Date | undefined {
  const groups = PARTITION_NAME.exec(name)?.groups;
  if (!groups) return undefined;
  const year = Number(groups.year);
  return groups.month ? new Date(Date.UTC(year, Number(groups.month), 1)) : new Date(Date.UTC(year + 1, 0, 1));
}

/** Partition creation and retention for the rollup tables. */
export function rollupPartitions(sql: Sql) {
  /** Creates the partitions of `tables` holding each instant of `at`; returns the names of those that did not exist. */
  const ensure = async (at: readonly Date[], tables: readonly PartitionedTable[] = ROLLUP_PARTITIONING): Promise<string[]> => {
    if (at.length === 0) return [];
    const before = new Set(await list());
    const rows = await sql<{ name: string }[]>`
      SELECT DISTINCT ensure_rollup_partition(p.parent, p.period, a.at) AS name
      FROM unnest(${tables.map((t) => t.table)}::text[], ${tables.map((t) => t.period)}::text[]) AS p(parent, period),
           unnest(${at.map((d) => d.toISOString())}::timestamptz[]) AS a(at)`;
    return rows
      .map((row) => row.name)
      .filter((name) => !before.has(name))
      .sort();
  };

  /** Names of every partition of the rollup tables. */
  const list = async (): Promise<string[]> => {
    const rows = await sql<{ name: string }[]>`
      SELECT c.relname AS name
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
      WHERE p.relname = ANY(${ROLLUP_PARTITIONING.map((t) => t.table)}::text[]) AND pg_table_is_visible(p.oid)
      ORDER BY 1`;
    return rows.map((row) => row.name);
  };

  /**
   * Drops one partition. Dropping locks the parent table; an analytics read holding it (a long
   * export) must not queue the worker's writes behind the drop for long, so the drop gives up
   * after a few seconds and is tried again at the next run.
   */
  const drop = (name: string) =>
    sql.begin(async (tx) => {
      await tx`SET LOCAL lock_timeout = '5s'`;
      await tx`DROP TABLE ${tx(name)}`;
    });

  return {
    ensure,
    list,

    /**
     * Creates the partitions of the current period and of the next `monthsAhead` months (so the
     * daily tables get next year's partition that many months before it starts), drops those
     * wholly older than the retention, and deletes the daily rows older than it from the year
     * partition the daily cutoff falls into.
     */
    async maintain(now: Date, retention: RollupRetention, monthsAhead = 2): Promise<PartitionMaintenance> {
      const created = await ensure(Array.from({ length: monthsAhead + 1 }, (_, i) => monthStart(now, i)));
      const cutoffs: Record<PartitionedTable['period'], Date | undefined> = {
        month: retentionCutoff(now, retention.hourlyMonths),
        year: retentionCutoff(now, retention.dailyMonths),
      };
      const dropped: string[] = [];
      const parents = new Map<string, PartitionedTable>(ROLLUP_PARTITIONING.map((t) => [t.table, t]));
      for (const name of await list()) {
        const table = parents.get(PARTITION_NAME.exec(name)?.groups?.parent ?? '');
        const cutoff = table && cutoffs[table.period];
        const end = partitionEnd(name);
        if (!cutoff || !end || end > cutoff) continue;
        await drop(name);
        dropped.push(name);
      }
      let deletedDailyRows = 0;
      if (cutoffs.year) {
        const day = cutoffs.year.toISOString().slice(0, 10);
        // The condition on the partition key prunes the scan to the one partition that straddles the cutoff.
        for (const { table, column } of ROLLUP_PARTITIONING.filter((t) => t.period === 'year')) {
          deletedDailyRows += (await sql`DELETE FROM ${sql(table)} WHERE ${sql(column)} < ${day}::date`).count;
        }
      }
      return { created, dropped, deletedDailyRows };
    },
  };
}
export type RollupPartitions = ReturnType<typeof rollupPartitions>;
