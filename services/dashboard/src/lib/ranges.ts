import type { TimeBucket } from '@deeplink/client';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** The report's range presets. */
export type RangePreset = '24h' | '7d' | '30d' | '90d' | '1y' | 'custom';

export const PRESETS: readonly { id: Exclude<RangePreset, 'custom'>; label: string; hours: number; bucket: TimeBucket }[] = [
  { id: '24h', label: '24 h', hours: 24, bucket: 'hour' },
  { id: '7d', label: '7 d', hours: 7 * 24, bucket: 'hour' },
  { id: '30d', label: '30 d', hours: 30 * 24, bucket: 'day' },
  { id: '90d', label: '90 d', hours: 90 * 24, bucket: 'day' },
  { id: '1y', label: '1 y', hours: 365 * 24, bucket: 'day' },
];

export const BUCKETS: readonly TimeBucket[] = ['hour', 'day', 'week', 'month'];
const BUCKET_MS: Record<TimeBucket, number> = { hour: HOUR, day: DAY, week: 7 * DAY, month: 30 * DAY };
/** The API's limit on buckets in one report (a year by hour fits). */
export const MAX_BUCKETS = 10_000;

/** A resolved range: start inclusive, end exclusive. */
export interface ResolvedRange {
  startDate: Date;
  endDate: Date;
}

/**
 * The range a preset stands for at `now`: it ends at the end of the current hour (the rollups'
 * grain, so the hour in progress is included) and reaches back the preset's length. A custom range
 * runs from the start of its first day to the end of its last, both in the browser's time zone.
 */
export function resolveRange(preset: RangePreset, now: Date, custom?: { from: string; to: string }): ResolvedRange {
  if (preset === 'custom') {
    if (!custom?.from || !custom.to) throw new Error('a custom range needs both dates');
    const startDate = localMidnight(custom.from);
    const endDate = localMidnight(custom.to);
    endDate.setDate(endDate.getDate() + 1);
    return { startDate, endDate };
  }
  const hours = PRESETS.find((candidate) => candidate.id === preset)!.hours;
  const endDate = new Date(Math.ceil((now.getTime() + 1) / HOUR) * HOUR);
  return { startDate: new Date(endDate.getTime() - hours * HOUR), endDate };
}

/**
 * The API's query for a range in `timezone`. A preset goes as instants, its end as the last
 * millisecond included (the API includes a date-time endDate: an end at 12:00 would add the 12:00
 * hour). A custom range goes as its two dates, which the API reads as whole days in `timezone`.
 */
export function rangeQuery(
  range: ResolvedRange,
  timezone: string,
  custom?: { from: string; to: string },
): { startDate: Date | string; endDate: Date | string; timezone: string } {
  if (custom) return { startDate: custom.from, endDate: custom.to, timezone };
  return { startDate: range.startDate, endDate: new Date(range.endDate.getTime() - 1), timezone };
}

/** The zone's offset from UTC at `at`, as Intl writes it in English (read, never shown): "GMT", "GMT+01:00", "GMT+05:30". */
function offsetName(zone: string, at: Date): string {
  return (
    new Intl.DateTimeFormat('en', { timeZone: zone, timeZoneName: 'longOffset' })
      .formatToParts(at)
      .find((part) => part.type === 'timeZoneName')?.value ?? 'GMT'
  );
}

/** Whether `zone` is a whole number of hours from UTC at `at`: the API counts clicks per UTC hour, and reports only in such zones. */
export const isWholeHourZone = (zone: string, at: Date): boolean => !/:(?!00)\d\d$/.test(offsetName(zone, at));

/** The zones a report can be shown in: every zone the browser knows that is a whole number of hours from UTC now, UTC first. */
export function reportTimeZones(at: Date, known: readonly string[] = Intl.supportedValuesOf('timeZone')): string[] {
  return ['UTC', ...known.filter((zone) => zone !== 'UTC' && isWholeHourZone(zone, at))];
}

/** The browser's zone when the API can report in it (Asia/Kolkata, at +05:30, it cannot), else UTC. */
export function defaultTimeZone(at: Date, browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone): string {
  return browserZone && isWholeHourZone(browserZone, at) ? browserZone : 'UTC';
}

/** `YYYY-MM-DD` at 00:00 in the browser's time zone. */
function localMidnight(day: string): Date {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  return new Date(year, month - 1, date);
}

/** The bucket a range shows by default: a preset's own, or for a custom range the finest that stays readable (≤ 400 points). */
export function defaultBucket(preset: RangePreset, range: ResolvedRange): TimeBucket {
  const own = PRESETS.find((candidate) => candidate.id === preset)?.bucket;
  if (own) return own;
  const span = range.endDate.getTime() - range.startDate.getTime();
  return BUCKETS.find((bucket) => span / BUCKET_MS[bucket] <= 400) ?? 'month';
}

/** The buckets a range can be shown by: within the API's limit, and at least two points (except hour, always allowed when it fits). */
export function allowedBuckets(range: ResolvedRange): TimeBucket[] {
  const span = range.endDate.getTime() - range.startDate.getTime();
  return BUCKETS.filter((bucket) => span / BUCKET_MS[bucket] <= MAX_BUCKETS && (bucket === 'hour' || span / BUCKET_MS[bucket] >= 2));
}

/** `YYYY-MM-DD` of a Date in the browser's time zone (for date inputs). */
export function localDay(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}
