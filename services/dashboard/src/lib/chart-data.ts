import type { LinkAnalytics, TimeBucket } from '@deeplink/client';

/** Points as uPlot takes them: x in Unix seconds, then one typed array per value (a year by hour is 8,760 points). */
export function timeColumns<T extends { date: string }>(points: readonly T[], values: readonly ((point: T) => number)[]): Float64Array[] {
  const columns = [new Float64Array(points.length), ...values.map(() => new Float64Array(points.length))];
  points.forEach((point, index) => {
    columns[0]![index] = Date.parse(point.date) / 1000;
    values.forEach((value, column) => {
      columns[column + 1]![index] = value(point);
    });
  });
  return columns;
}

/** The time series as uPlot takes it: x in Unix seconds, then clicks and unique clicks. */
export function seriesData(
  points: readonly { date: string; clicks: number; uniqueClicks?: number }[],
): [Float64Array, Float64Array, Float64Array] {
  return timeColumns(points, [(point) => point.clicks, (point) => point.uniqueClicks ?? 0]) as [Float64Array, Float64Array, Float64Array];
}

/** The funnel's steps over time: x in Unix seconds, then clicks, store redirects, installs and first opens. */
export function funnelSeriesData(points: readonly { date: string; clicks: number; appEvents: FunnelBucketEvents }[]): Float64Array[] {
  return timeColumns(points, [
    (point) => point.clicks,
    (point) => point.appEvents.REDIRECT,
    (point) => point.appEvents.APP_INSTALL,
    (point) => point.appEvents.APP_FIRST_OPEN,
  ]);
}

/** The app events of one time series bucket, each over every platform. */
export type FunnelBucketEvents = LinkAnalytics['timeSeries'][number]['appEvents'];

/** Clicks per day of the whole account, from its export (one row per link and day), summed by day. */
export function accountDailyClicks(rows: readonly { bucket_start: string; clicks: number }[]): { date: string; clicks: number }[] {
  const byDay = new Map<string, number>();
  for (const row of rows) byDay.set(row.bucket_start, (byDay.get(row.bucket_start) ?? 0) + row.clicks);
  return [...byDay].sort(([a], [b]) => a.localeCompare(b)).map(([date, clicks]) => ({ date, clicks }));
}

/** Catch-all labels the API uses; they sort last and are never translated. */
const CATCH_ALL = new Set(['Other', 'Unknown']);

export interface BreakdownRow {
  key: string;
  label: string;
  clicks: number;
  /** Share of the breakdown's total, 0-1. */
  share: number;
}

/**
 * A breakdown as rows for bars and tables: largest first (ties by label), the catch-all labels
 * last, each with its share of the total and a readable label (`label(key)`).
 */
export function breakdownRows(counts: Record<string, number>, label: (key: string) => string = (key) => key): BreakdownRow[] {
  const total = Object.values(counts).reduce((sum, clicks) => sum + clicks, 0);
  return Object.entries(counts)
    .sort(([a, x], [b, y]) => Number(CATCH_ALL.has(a)) - Number(CATCH_ALL.has(b)) || y - x || a.localeCompare(b))
    .map(([key, clicks]) => ({ key, label: CATCH_ALL.has(key) ? key : label(key), clicks, share: total === 0 ? 0 : clicks / total }));
}

let regionNames: Intl.DisplayNames | undefined;

/** A country's name for its ISO code ("DE" → "Germany"), in English; the code itself when unknown. */
export function countryName(code: string): string {
  if (!/^[A-Z]{2}$/.test(code)) return code;
  regionNames ??= new Intl.DisplayNames(['en'], { type: 'region', fallback: 'code' });
  const name = regionNames.of(code);
  return name && name !== code ? `${name} (${code})` : code;
}

/** Formatters by bucket and time zone: making one costs far more than using it, and a year by hour labels 8,760 rows. */
const formatters = new Map<string, Intl.DateTimeFormat>();

/** How a bucket's start reads in tables and tooltips, in `timeZone` (default: the browser's). */
export function bucketLabel(iso: string, bucket: TimeBucket, timeZone?: string): string {
  const key = `${bucket} ${timeZone ?? ''}`;
  let format = formatters.get(key);
  if (!format) {
    const options: Intl.DateTimeFormatOptions =
      bucket === 'hour'
        ? { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }
        : bucket === 'month'
          ? { year: 'numeric', month: 'long' }
          : { year: 'numeric', month: 'short', day: 'numeric' };
    format = new Intl.DateTimeFormat(undefined, { ...options, timeZone });
    formatters.set(key, format);
  }
  return format.format(new Date(iso));
}
