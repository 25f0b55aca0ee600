// Analytics load: range queries of different lengths and bucket sizes (a day by hour up to a
// year by hour and by month) and the account summary, at a fixed arrival rate.
//
//   k6 run -e BASE_URL=https://links.example.com/api -e RATE=20 -e DURATION=5m loadtest/k6/analytics.js
//
// BASE_URL  the API, ending in /api; SHORT_URL_BASE where to reach the redirector, if not the links' host
// RATE      queries per second (default 10); DURATION (default 1m)
// LINKS     links created in setup (default 20), each visited VISITS times (default 20) so the
//           reports have clicks; setup then waits SETTLE_SECONDS (default 5) for the worker
// P99_MS    the p99 threshold in ms (default 500)
// As with api.js, the API's per-user rate limit must allow RATE requests per second.
import http from 'k6/http';
import { check, sleep } from 'k6';
import { BASE_URL, AGENTS, createAccount, createLinks, headers, intEnv, pick, arrivalRate } from './lib/common.js';

const RATE = intEnv('RATE', 10);
const HOUR = 3600 * 1000;
const DAY = 24 * HOUR;

/** @typedef {{ name: string, days: number, bucket: 'hour' | 'day' | 'week' | 'month' }} RangeQuery */

/** The ranges a dashboard asks for; the last is the heaviest report the API allows for a year. @type {RangeQuery[]} */
const RANGES = [
  { name: 'day by hour', days: 1, bucket: 'hour' },
  { name: 'week by day', days: 7, bucket: 'day' },
  { name: 'month by day', days: 30, bucket: 'day' },
  { name: 'quarter by week', days: 90, bucket: 'week' },
  { name: 'year by month', days: 365, bucket: 'month' },
  { name: 'year by hour', days: 365, bucket: 'hour' },
];

/** @type {import('k6/options').Options} */
export const options = {
  maxRedirects: 0,
  scenarios: {
    analytics: arrivalRate(RATE, Math.max(5, RATE), Math.max(20, RATE * 4)),
  },
  thresholds: {
    http_req_failed: ['rate<0.01'],
    'http_req_duration{scenario:analytics}': [`p(99)<${intEnv('P99_MS', 500)}`],
    checks: ['rate>0.99'],
  },
};

/** Creates the account and links, and visits the links so there is something to report. */
export function setup() {
  const { key } = createAccount('k6-analytics');
  const links = createLinks(key, intEnv('LINKS', 20), 'k6 analytics');
  const humans = AGENTS.filter((agent) => !agent.bot);
  const visits = intEnv('VISITS', 20);
  for (const link of links) {
    const requests = Array.from({ length: visits }, (_, i) => ({
      method: 'GET',
      url: link.url,
      params: {
        redirects: 0,
        headers: { 'User-Agent': /** @type {typeof humans[number]} */ (humans[i % humans.length]).userAgent },
        tags: { name: 'setup: visit' },
      },
    }));
    http.batch(requests);
  }
  sleep(intEnv('SETTLE_SECONDS', 5));
  return { key, links };
}

/**
 * ISO timestamp `days` days before now.
 * @param {number} days
 */
const daysAgo = (days) => new Date(Date.now() - days * DAY).toISOString();

/** One query: usually a link report over a random range, sometimes the summary. @param {ReturnType<typeof setup>} data */
export default function (data) {
  const auth = { headers: headers(data.key) };
  if (Math.random() < 0.1) {
    const res = http.get(`${BASE_URL}/analytics/summary`, { ...auth, tags: { name: 'GET /analytics/summary' } });
    check(res, {
      'summary: 200': (r) => r.status === 200,
      'summary: counts links': (r) => r.status === 200 && /** @type {any} */ (r.json()).data.summary.totalLinks >= data.links.length,
    });
    return;
  }
  const link = pick(data.links);
  const range = pick(RANGES);
  const query = `startDate=${encodeURIComponent(daysAgo(range.days))}&endDate=${encodeURIComponent(new Date().toISOString())}&timeBucket=${range.bucket}`;
  const res = http.get(`${BASE_URL}/analytics/links/${link.id}?${query}`, {
    ...auth,
    tags: { name: `GET /analytics/links/:id (${range.name})` },
  });
  check(res, {
    'report: 200': (r) => r.status === 200,
    'report: time series adds up to totalClicks': (r) => {
      if (r.status !== 200) return false;
      const { analytics } = /** @type {any} */ (r.json()).data;
      /** @type {{ clicks: number }[]} */
      const series = analytics.timeSeries;
      return series.length > 0 && series.reduce((sum, point) => sum + point.clicks, 0) === analytics.totalClicks;
    },
  });
}
