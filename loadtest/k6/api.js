// Management API load with an API key at a fixed arrival rate: a mix of creates, lists, reads
// and partial updates of links, as dashboards and integrations send them.
//
//   k6 run -e BASE_URL=https://links.example.com/api -e RATE=50 -e DURATION=5m loadtest/k6/api.js
//
// BASE_URL  the API, ending in /api; RATE requests per second (default 8); DURATION (default 1m)
// LINKS     links created in setup for reads and updates (default 50)
// MIX       percentages of create,list,get,update (default 20,30,40,10)
// P99_MS    the p99 threshold in ms (default 250)
//
// The API rate-limits each user (RATE_LIMIT_MAX per RATE_LIMIT_WINDOW_SECONDS, 600 a minute by
// default): the default RATE, 480 a minute plus setup's requests, stays under it. For a higher RATE
// raise RATE_LIMIT_MAX on the deployment under test (above RATE × 60 + LINKS + 3), or the 429s
// counted in `rate_limited` fail the run.
import http from 'k6/http';
import { check, fail } from 'k6';
import { Counter } from 'k6/metrics';
import { BASE_URL, createAccount, createLinks, headers, intEnv, linkBody, pick, arrivalRate } from './lib/common.js';

const RATE = intEnv('RATE', 8);
const MIX = (__ENV.MIX || '20,30,40,10').split(',').map(Number);
if (MIX.length !== 4 || MIX.some((n) => !Number.isFinite(n) || n < 0)) fail('MIX must be four numbers: create,list,get,update');
const [CREATE = 0, LIST = 0, GET = 0] = MIX;
const MIX_TOTAL = MIX.reduce((sum, n) => sum + n, 0);

/** Answers 429: the run measured the rate limiter rather than the API. */
const rateLimited = new Counter('rate_limited');

/** @type {import('k6/options').Options} */
export const options = {
  scenarios: {
    api: arrivalRate(RATE, Math.max(5, Math.ceil(RATE / 5)), Math.max(20, RATE * 2)),
  },
  thresholds: {
    http_req_failed: ['rate<0.01'],
    'http_req_duration{scenario:api}': [`p(99)<${intEnv('P99_MS', 250)}`],
    checks: ['rate>0.99'],
    rate_limited: ['count<1'],
  },
};

/** Creates the account, its API key, and links to read and update. */
export function setup() {
  const { key } = createAccount('k6-api');
  return { key, links: createLinks(key, intEnv('LINKS', 50), 'k6 api') };
}

/**
 * Checks the answer, counting 429s apart.
 * @param {import('k6/http').RefinedResponse<any>} res
 * @param {number} status
 * @param {string} name
 * @param {(body: any) => boolean} valid
 */
function verify(res, status, name, valid) {
  if (res.status === 429) rateLimited.add(1);
  check(res, {
    [`${name}: ${status}`]: (r) => r.status === status,
    [`${name}: body`]: (r) => r.status === status && valid(/** @type {any} */ (r.json())),
  });
}

/** One request of the mix. @param {ReturnType<typeof setup>} data */
export default function (data) {
  const auth = { headers: headers(data.key) };
  const roll = Math.random() * MIX_TOTAL;
  if (roll < CREATE) {
    const index = Math.floor(Math.random() * 1e6);
    const res = http.post(`${BASE_URL}/links`, JSON.stringify(linkBody(index, `k6 api created ${index}`)), {
      ...auth,
      tags: { name: 'POST /links' },
    });
    verify(res, 201, 'create', (body) => typeof body.data.link.id === 'string' && typeof body.data.link.url === 'string');
  } else if (roll < CREATE + LIST) {
    const page = 1 + Math.floor(Math.random() * 3);
    const sortBy = pick(['createdAt', 'updatedAt', 'title']);
    const res = http.get(`${BASE_URL}/links?page=${page}&limit=20&sortBy=${sortBy}&sortDirection=desc`, {
      ...auth,
      tags: { name: 'GET /links' },
    });
    verify(res, 200, 'list', (body) => Array.isArray(body.data.links) && body.data.pagination.page === page);
  } else if (roll < CREATE + LIST + GET) {
    const link = pick(data.links);
    const res = http.get(`${BASE_URL}/links/${link.id}`, { ...auth, tags: { name: 'GET /links/:id' } });
    verify(res, 200, 'get', (body) => body.data.link.id === link.id);
  } else {
    const link = pick(data.links);
    const title = `k6 api updated ${Date.now()}`;
    const res = http.put(`${BASE_URL}/links/${link.id}`, JSON.stringify({ title, customParameters: { utm_content: 'k6' } }), {
      ...auth,
      tags: { name: 'PUT /links/:id' },
    });
    verify(res, 200, 'update', (body) => body.data.link.title === title && body.data.link.customParameters.utm_content === 'k6');
  }
}
