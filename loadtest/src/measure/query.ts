import { performance } from 'node:perf_hooks';
import { apiCall, type ApiSession } from '../seed.js';

/**
 * The filters of the bench's filtered year query: two dimensions, as an analyst drills down (iPhone
 * visits from the US, about a tenth of the year link's clicks).
 */
export const YEAR_QUERY_FILTERS: readonly [string, string][] = [
  ['platform', 'iOS'],
  ['country', 'US'],
];

/** Path and query of the one-year hourly report of a link, ending at `now`, under `filters` when given. */
export function yearQueryPath(linkId: string, now: Date, filters: readonly [string, string][] = []): string {
  const start = new Date(now.getTime() - 365 * 24 * 3_600_000);
  const query = new URLSearchParams([
    ['startDate', start.toISOString()],
    ['endDate', now.toISOString()],
    ['timeBucket', 'hour'],
    ...filters,
  ]);
  return `/analytics/links/${linkId}?${query}`;
}

/**
 * Calls the one-year hourly report `requests` times in a row (after one unmeasured call) and
 * returns each call's wall time in milliseconds, as a dashboard would see it, JSON parse included.
 * Also returns the number of buckets the report had, to show the range was really a year, and
 * its totalClicks, to show what the filters kept.
 */
export async function measureYearQuery(
  session: ApiSession,
  linkId: string,
  requests: number,
  onSample: (done: number) => void,
  filters: readonly [string, string][] = [],
): Promise<{ durationsMs: number[]; buckets: number; totalClicks: number }> {
  const path = yearQueryPath(linkId, new Date(), filters);
  const call = () =>
    apiCall<{ analytics: { timeSeries: unknown[]; totalClicks: number } }>(session.baseUrl, 'GET', path, { token: session.key });
  const first = (await call()).analytics;
  const durationsMs: number[] = [];
  for (let i = 0; i < requests; i++) {
    const started = performance.now();
    await call();
    durationsMs.push(performance.now() - started);
    onSample(i + 1);
  }
  return { durationsMs, buckets: first.timeSeries.length, totalClicks: first.totalClicks };
}
