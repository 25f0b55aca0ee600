import { invalidRequest, type LinkAnalyticsQuery, type TimeBucket } from '@deeplink/core';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Length of the default range, in UTC days ending with today. */
export const DEFAULT_RANGE_DAYS = 30;
/** Ranges end by 9999-12-31 00:00 UTC, so every instant in a response has a four-digit year. */
const LATEST_END = Date.UTC(9999, 11, 31);

/** Most buckets one report may have: a year by hour fits, a decade by hour does not. */
export const MAX_BUCKETS = 10_000;

/** A report range in whole UTC hours (the rollups' grain): start inclusive, end exclusive. */
export interface AnalyticsRange {
  start: Date;
  end: Date;
  timeBucket: TimeBucket;
  /** Start (epoch ms) of every bucket the range touches; the first may start before the range. */
  buckets: number[];
}

const isBareDate = (value: string) => !value.includes('T');
const floorTo = (ms: number, step: number) => Math.floor(ms / step) * step;
const ceilTo = (ms: number, step: number) => Math.ceil(ms / step) * step;

/** 00:00 UTC on the first of a month; unlike Date.UTC, years 0-99 are not read as 1900-1999. */
const monthStart = (year: number, month: number) => new Date(0).setUTCFullYear(year, month, 1);

/** Start of the UTC bucket containing `ms`, as PostgreSQL's date_trunc gives it (ISO weeks start on Monday). */
function bucketStart(ms: number, bucket: TimeBucket): number {
  switch (bucket) {
    case 'hour':
      return floorTo(ms, HOUR);
    case 'day':
      return floorTo(ms, DAY);
    case 'week': {
      // 1970-01-01 was a Thursday: three days after a Monday.
      const day = Math.floor(ms / DAY);
      return (day - ((((day + 3) % 7) + 7) % 7)) * DAY;
    }
    case 'month': {
      const date = new Date(ms);
      return monthStart(date.getUTCFullYear(), date.getUTCMonth());
    }
  }
}

const nextBucket = (start: number, bucket: TimeBucket) => {
  if (bucket !== 'month') return start + { hour: HOUR, day: DAY, week: 7 * DAY }[bucket];
  const date = new Date(start);
  return monthStart(date.getUTCFullYear(), date.getUTCMonth() + 1);
};

/** The bucket starts of [start, end), or undefined as soon as there would be more than `limit`. */
function bucketStarts(start: number, end: number, bucket: TimeBucket, limit: number): number[] | undefined {
  const starts: number[] = [];
  for (let at = bucketStart(start, bucket); at < end; at = nextBucket(at, bucket)) {
    if (starts.length === limit) return undefined;
    starts.push(at);
  }
  return starts;
}

/**
 * ISO strings of bucket starts. Every start is a whole UTC hour, so the date part is formatted
 * once per day: a year by hour has 8760 starts, and toISOString on each was the slowest step.
 */
export function bucketIsoStrings(starts: readonly number[]): string[] {
  let day = Number.NaN;
  let prefix = '';
  return starts.map((start) => {
    const startDay = Math.floor(start / DAY);
    if (startDay !== day) {
      day = startDay;
      prefix = new Date(day * DAY).toISOString().slice(0, 11);
    }
    const hour = (start - day * DAY) / HOUR;
    return `${prefix}${hour < 10 ? '0' : ''}${hour}:00:00.000Z`;
  });
}

/**
 * Turns the query into a range. A bare startDate means 00:00 UTC of that day; a bare endDate
 * includes its whole UTC day and a date-time endDate includes that instant. Both ends are then
 * widened to whole hours, because clicks are stored per hour. Defaults: the DEFAULT_RANGE_DAYS
 * UTC days ending with today (today included). Throws INVALID_REQUEST naming the bad field.
 */
export function resolveRange(query: LinkAnalyticsQuery, now: Date): AnalyticsRange {
  const { startDate, endDate, timeBucket } = query;
  const endExclusive = endDate === undefined ? floorTo(now.getTime(), DAY) + DAY
    : isBareDate(endDate) ? Date.parse(endDate) + DAY
    : Date.parse(endDate) + 1;
  const startInclusive = startDate === undefined ? endExclusive - DEFAULT_RANGE_DAYS * DAY : Date.parse(startDate);
  if (endExclusive > LATEST_END) {
    throw invalidRequest('The date range ends too late', [{ field: 'endDate', message: 'must be before 9999-12-31' }]);
  }
  if (startInclusive >= endExclusive) {
    throw invalidRequest('The date range is empty', [
      { field: 'startDate', message: endDate === undefined ? 'must not be after today (the default endDate)' : 'must not be after endDate' },
    ]);
  }
  const start = floorTo(startInclusive, HOUR);
  const end = ceilTo(endExclusive, HOUR);
  const buckets = bucketStarts(start, end, timeBucket, MAX_BUCKETS);
  if (!buckets) {
    throw invalidRequest('The report would have too many time buckets', [
      {
        field: 'timeBucket',
        message: `the range from startDate to endDate has more than ${MAX_BUCKETS} ${timeBucket} buckets; choose a coarser timeBucket or a shorter range`,
      },
    ]);
  }
  return { start: new Date(start), end: new Date(end), timeBucket, buckets };
}
