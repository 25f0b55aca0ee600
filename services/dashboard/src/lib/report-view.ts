import type { TimeBucket } from '@deeplink/client';
import { type Filter, filterSearch, parseFilters } from './filters.js';
import { BUCKETS, defaultBucket, localDay, PRESETS, type RangePreset, resolveRange } from './ranges.js';

/**
 * What a report page shows, as its address holds it: the range (a preset, or custom dates), the
 * bucket, the time zone and the filters. Only what differs from the defaults is written, so a
 * plain address (`/links/abc`) is the default view: the last 30 days by day, in the browser's
 * zone, unfiltered.
 */
export interface ReportView {
  preset: RangePreset;
  /** The custom range's first and last days (`YYYY-MM-DD`); the last 30 days when not given. */
  custom: { from: string; to: string };
  /** The bucket asked for; the preset's own when the address names none. */
  bucket: TimeBucket;
  timeZone: string;
  filters: Filter[];
}

const DAY_PATTERN = /^\d{4}-\d\d-\d\d$/;
const isPreset = (value: string | null): value is RangePreset => value === 'custom' || PRESETS.some((preset) => preset.id === value);
const isBucket = (value: string | null): value is TimeBucket => BUCKETS.includes(value as TimeBucket);

/** The last 30 days to today, the custom range's default. */
function lastThirtyDays(now: Date): { from: string; to: string } {
  return { from: localDay(new Date(now.getTime() - 29 * 86_400_000)), to: localDay(now) };
}

/**
 * The view an address describes, at `now`. Anything unreadable (an unknown preset or bucket, a
 * zone not offered, dates out of order) falls back to its default rather than failing the page.
 */
export function readReportView(query: URLSearchParams, now: Date, zones: readonly string[], defaultZone: string): ReportView {
  const range = query.get('range');
  const preset: RangePreset = isPreset(range) ? range : '30d';
  const from = query.get('from') ?? '';
  const to = query.get('to') ?? '';
  const custom = DAY_PATTERN.test(from) && DAY_PATTERN.test(to) && from <= to ? { from, to } : lastThirtyDays(now);
  const bucketParam = query.get('bucket');
  const bucket = isBucket(bucketParam) ? bucketParam : defaultBucket(preset, resolveRange(preset, now, custom));
  const zone = query.get('tz');
  const timeZone = zone && zones.includes(zone) ? zone : defaultZone;
  return { preset, custom, bucket, timeZone, filters: parseFilters(query) };
}

/** The address's query for a view: the defaults left out, the filters under the API's parameter names. */
export function writeReportView(view: ReportView, now: Date, defaultZone: string): URLSearchParams {
  const query = new URLSearchParams();
  if (view.preset !== '30d') query.set('range', view.preset);
  if (view.preset === 'custom') {
    query.set('from', view.custom.from);
    query.set('to', view.custom.to);
  }
  if (view.bucket !== defaultBucket(view.preset, resolveRange(view.preset, now, view.custom))) query.set('bucket', view.bucket);
  if (view.timeZone !== defaultZone) query.set('tz', view.timeZone);
  for (const [param, value] of filterSearch(view.filters)) query.append(param, value);
  return query;
}

/** `path?query`, or the path alone when the query is empty. */
export const withQuery = (path: string, query: URLSearchParams): string => {
  const search = query.toString();
  return search ? `${path}?${search}` : path;
};
