import { invalidRequest, type LinkAnalyticsQuery, type TimeBucket } from '@deeplink/core';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;

/** Length of the default range, in UTC days ending with today. */
export const DEFAULT_RANGE_DAYS = 30;
/** Most buckets one report may have: a year by hour fits, a decade by hour does not. */
export const MAX_BUCKETS = 10_000;

/** A report range in whole UTC hours (the rollups' grain): start inclusive, end exclusive. */
export interface AnalyticsRange {
  start: Date;
  end: Date;
  timeBucket: TimeBucket;
}

const isBareDate = (value: string) => !value.includes('T');
const floorTo = (ms: number, step: number) => Math.floor(ms / step) * step;
const ceilTo = (ms: number, step: number) => Math.ceil(ms / step) * step;

/** Start of the ISO week (Monday 00:00 UTC) containing `ms`. 1970-01-01 was a Thursday. */
const floorWeek = (ms: number) => {
  const day = Math.floor(ms / DAY);
  return (day - (((day + 3) % 7) + 7) % 7) * DAY;
};

const monthIndex = (ms: number) => {
  const date = new Date(ms);
  return date.getUTCFullYear() * 12 + date.getUTCMonth();
};

/** How many buckets of `timeBucket` the range touches; the first may start before the range. */
export function countBuckets({ start, end, timeBucket }: AnalyticsRange): number {
  const from = start.getTime();
  const to = end.getTime();
  switch (timeBucket) {
    case 'hour':
      return (to - from) / HOUR;
    case 'day':
      return (ceilTo(to, DAY) - floorTo(from, DAY)) / DAY;
    case 'week':
      return Math.ceil((to - floorWeek(from)) / WEEK);
    case 'month':
      return monthIndex(to - 1) - monthIndex(from) + 1;
  }
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
  const start = startDate === undefined ? endExclusive - DEFAULT_RANGE_DAYS * DAY : Date.parse(startDate);
  if (start >= endExclusive) {
    throw invalidRequest('The date range is empty', [
      { field: 'startDate', message: endDate === undefined ? 'must not be after today (the default endDate)' : 'must not be after endDate' },
    ]);
  }
  const range = { start: new Date(floorTo(start, HOUR)), end: new Date(ceilTo(endExclusive, HOUR)), timeBucket };
  const buckets = countBuckets(range);
  if (buckets > MAX_BUCKETS) {
    throw invalidRequest('The report would have too many time buckets', [
      {
        field: 'timeBucket',
        message: `the range from startDate to endDate has ${buckets} ${timeBucket} buckets; at most ${MAX_BUCKETS} are allowed, so choose a coarser timeBucket or a shorter range`,
      },
    ]);
  }
  return range;
}
