import { performance } from 'node:perf_hooks';
import { apiCall, type ApiSession } from '../seed.js';

/** Path and query of the one-year hourly report of a link, ending at `now`. */
export function yearQueryPath(linkId: string, now: Date): string {
  const start = new Date(now.getTime() - 365 * 24 * 3_600_000);
  const query = new URLSearchParams({ startDate: start.toISOString(), endDate: now.toISOString(), timeBucket: 'hour' });
  return `/analytics/links/${linkId}?${query}`;
}

/**
 * Calls the one-year hourly report `requests` times in a row (after one unmeasured call) and
 * returns each call's wall time in milliseconds, as a dashboard would see it, JSON parse included.
 * Also returns the number of buckets the report had, to show the range was really a year.
 */
export async function measureYearQuery(
  session: ApiSession,
  linkId: string,
  requests: number,
  onSample: (done: number) => void,
): Promise<{ durationsMs: number[]; buckets: number }> {
  const path = yearQueryPath(linkId, new Date());
  const call = () => apiCall<{ analytics: { timeSeries: unknown[] } }>(session.baseUrl, 'GET', path, { token: session.key });
  let buckets = 0;
  for (let i = 0; i < 1; i++) buckets = (await call()).analytics.timeSeries.length;
  const durationsMs: number[] = [];
  for (let i = 0; i < requests; i++) {
    const started = performance.now();
    await call();
    durationsMs.push(performance.now() - started);
    onSample(i + 1);
  }
  return { durationsMs, buckets };
}
