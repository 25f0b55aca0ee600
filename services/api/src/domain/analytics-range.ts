import { EARLIEST_INSTANT, invalidRequest, type LinkAnalyticsQuery, type TimeBucket } from '@deeplink/core';
import { assertWholeHour, clockOf, type ZoneClock } from './time-zone.js';

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
  /** The IANA zone whose local midnights start day, week and month buckets; `UTC` by default. */
  timezone: string;
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

/**
 * The bucket starts of [start, end), or undefined as soon as there would be more than `limit`.
 * Day, week and month buckets start at the zone's local midnight (so a day may last 23 or 25
 * hours); hours are UTC hours, which are the zone's hours too, as its offset is whole hours.
 */
function bucketStarts(start: number, end: number, bucket: TimeBucket, limit: number, clock: ZoneClock): number[] | undefined {
  const starts: number[] = [];
  const localBucket = (at: number) => clock.fromLocal(bucketStart(clock.toLocal(at), bucket));
  let at = bucket === 'hour' ? bucketStart(start, bucket) : localBucket(start);
  for (; at < end; at = bucket === 'hour' ? at + HOUR : clock.fromLocal(nextBucket(bucketStart(clock.toLocal(at), bucket), bucket))) {
    if (starts.length === limit) return undefined;
    if (bucket !== 'hour') assertWholeHour(at, clock);
    starts.push(at);
  }
  // Hour buckets: the offset checked once a (local) day, enough to see any change of it.
  if (bucket === 'hour' && clock.zone !== 'UTC') {
    for (let day = start; day < end; day += DAY) assertWholeHour(localBucket(day), clock);
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

/** The query fields a range is made of; `timezone` defaults to UTC. */
export type RangeQuery = Omit<LinkAnalyticsQuery, 'timezone'> & { timezone?: string };

/**
 * Turns the query into a range. A bare startDate means local midnight of that day in `timezone`
 * (UTC by default); a bare endDate includes its whole local day and a date-time endDate includes
 * that instant. Both ends are then widened to whole hours, because clicks are stored per hour.
 * Defaults: the DEFAULT_RANGE_DAYS local days ending with today (today included). Throws
 * INVALID_REQUEST naming the bad field.
 */
export function resolveRange(query: RangeQuery, now: Date): AnalyticsRange {
  const { startDate, endDate, timeBucket } = query;
  const clock = clockOf(query.timezone ?? 'UTC');
  const localMidnight = (localDay: number) => {
    const instant = clock.fromLocal(localDay);
    assertWholeHour(instant, clock);
    return instant;
  };
  const today = floorTo(clock.toLocal(now.getTime()), DAY);
  const endExclusive =
    endDate === undefined
      ? localMidnight(today + DAY)
      : isBareDate(endDate)
        ? localMidnight(Date.parse(endDate) + DAY)
        : Date.parse(endDate) + 1;
  const startInclusive =
    startDate === undefined
      ? clock.fromLocal(clock.toLocal(endExclusive) - DEFAULT_RANGE_DAYS * DAY)
      : isBareDate(startDate)
        ? localMidnight(Date.parse(startDate))
        : Date.parse(startDate);
  if (endExclusive > LATEST_END) {
    throw invalidRequest('The date range ends too late', [{ field: 'endDate', message: 'must be before 9999-12-31' }]);
  }
  if (startInclusive < EARLIEST_INSTANT) {
    // A default start, or a bare date's local midnight east of UTC, can fall in the year 0.
    throw invalidRequest('The date range starts too early', [
      startDate === undefined
        ? {
            field: 'endDate',
            message: `is too early: the default range of ${DEFAULT_RANGE_DAYS} days before it would start before the year 1; give startDate too`,
          }
        : { field: 'startDate', message: 'must not be before 0001-01-01T00:00:00Z' },
    ]);
  }
  if (startInclusive >= endExclusive) {
    throw invalidRequest('The date range is empty', [
      {
        field: 'startDate',
        message: endDate === undefined ? 'must not be after today (the default endDate)' : 'must not be after endDate',
      },
    ]);
  }
  const start = floorTo(startInclusive, HOUR);
  const end = ceilTo(endExclusive, HOUR);
  const buckets = bucketStarts(start, end, timeBucket, MAX_BUCKETS, clock);
  if (!buckets) {
    throw invalidRequest('The report would have too many time buckets', [
      {
        field: 'timeBucket',
        message: `the range from startDate to endDate has more than ${MAX_BUCKETS} ${timeBucket} buckets; choose a coarser timeBucket or a shorter range`,
      },
    ]);
  }
  return { start: new Date(start), end: new Date(end), timeBucket, timezone: clock.zone, buckets };
}
