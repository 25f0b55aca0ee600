// Redirect load at a fixed arrival rate: many links, a realistic mix of phones, desktops and
// bots, no redirect following. Checks the status and Location of every answer against the
// routing rules; fails the run on errors or a slow p99.
//
//   k6 run -e BASE_URL=https://links.example.com/api -e RATE=2000 -e DURATION=5m loadtest/k6/redirect.js
//
// BASE_URL   the API, ending in /api (setup creates an account, an API key and LINKS links there)
// SHORT_URL_BASE  where to reach the redirector, if not the host in the links' url
// RATE       redirects per second (default 500); DURATION (default 1m); LINKS (default 200)
// VUS / MAX_VUS   pre-allocated and maximum virtual users (default RATE/10 and RATE)
// P99_MS     the p99 threshold in ms (default 50; network latency to the target counts)
import http from 'k6/http';
import { check } from 'k6';
import { Counter } from 'k6/metrics';
import { createAccount, createLinks, expectedAnswer, intEnv, pick, pickAgent, arrivalRate } from './lib/common.js';

const RATE = intEnv('RATE', 500);
const LINKS = intEnv('LINKS', 200);

/** Redirects answered to bots: the worker must leave these out of the analytics. */
const botVisits = new Counter('bot_visits');

/** @type {import('k6/options').Options} */
export const options = {
  // Never follow the redirect: the answer itself is what is measured (intent:// is not fetchable anyway).
  maxRedirects: 0,
  scenarios: {
    redirects: arrivalRate(RATE, Math.max(10, Math.ceil(RATE / 10)), Math.max(50, RATE)),
  },
  thresholds: {
    http_req_failed: ['rate<0.001'],
    'http_req_duration{scenario:redirects}': [`p(99)<${intEnv('P99_MS', 50)}`],
    checks: ['rate>0.999'],
    // Falling behind the arrival rate means the target (or the generator) could not keep up.
    dropped_iterations: ['count<1'],
  },
};

/** Creates the account and links the run redirects to. */
export function setup() {
  const { key } = createAccount('k6-redirect');
  return { links: createLinks(key, LINKS, 'k6 redirect') };
}

/** One visit: a random link, an agent from the mix. @param {ReturnType<typeof setup>} data */
export default function (data) {
  const link = pick(data.links);
  const agent = pickAgent();
  const expected = expectedAnswer(link, agent.platform);
  const res = http.get(link.url, {
    redirects: 0,
    headers: { 'User-Agent': agent.userAgent },
    tags: { name: 'GET /{code}', platform: agent.platform, bot: String(agent.bot) },
  });
  if (agent.bot) botVisits.add(1);
  const location = res.headers.Location || '';
  check(res, {
    'status is 302 (200 for the iOS app page)': (r) => r.status === expected.status,
    'Location is the platform destination': () => expected.location === undefined || location.startsWith(expected.location),
    'never cached downstream': (r) => (r.headers['Cache-Control'] || '').includes('no-store'),
  });
}
