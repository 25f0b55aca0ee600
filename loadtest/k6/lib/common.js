// Shared by the k6 scripts: settings from __ENV, weighted picks, and setup() helpers that create
// an account, an API key and links through the public API, as any integration would.
import http from 'k6/http';
import { fail } from 'k6';
import { AGENTS, linkBody, pathOf } from './traffic.js';

export { AGENTS, expectedAnswer, linkBody } from './traffic.js';

/** @typedef {import('./traffic.js').Agent} Agent */
/** @typedef {import('./traffic.js').SeededLink} SeededLink */

/** The API's base URL, ending in /api (BASE_URL). */
export const BASE_URL = (__ENV.BASE_URL || 'http://127.0.0.1:3000/api').replace(/\/+$/, '');

/**
 * Where the load generator reaches the redirector (SHORT_URL_BASE). Defaults to the host in the
 * links' own `url`; set it when the generator must use another address (a load balancer, a port).
 */
export const SHORT_URL_BASE = (__ENV.SHORT_URL_BASE || '').replace(/\/+$/, '');

/**
 * An integer setting from __ENV, or `fallback`.
 * @param {string} name
 * @param {number} fallback
 * @returns {number}
 */
export function intEnv(name, fallback) {
  const text = __ENV[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) fail(`${name} must be a non-negative integer, got "${text}"`);
  return value;
}

/**
 * A constant-arrival-rate scenario: `rate` iterations a second for DURATION (default 1m), with
 * VUS and MAX_VUS overriding the virtual users the caller sizes for its rate.
 * @param {number} rate
 * @param {number} vus
 * @param {number} maxVus
 * @returns {import('k6/options').Scenario}
 */
export function arrivalRate(rate, vus, maxVus) {
  return {
    executor: 'constant-arrival-rate',
    rate,
    timeUnit: '1s',
    duration: __ENV.DURATION || '1m',
    preAllocatedVUs: intEnv('VUS', vus),
    maxVUs: intEnv('MAX_VUS', maxVus),
  };
}

const TOTAL_WEIGHT = AGENTS.reduce((sum, agent) => sum + agent.weight, 0);

/**
 * An agent drawn by weight.
 * @param {Agent[]} [agents]
 * @returns {Agent}
 */
export function pickAgent(agents = AGENTS) {
  const total = agents === AGENTS ? TOTAL_WEIGHT : agents.reduce((sum, agent) => sum + agent.weight, 0);
  let remaining = Math.random() * total;
  for (const agent of agents) {
    remaining -= agent.weight;
    if (remaining < 0) return agent;
  }
  return /** @type {Agent} */ (agents[agents.length - 1]);
}

/**
 * A random element of a non-empty array.
 * @template T
 * @param {T[]} items
 * @returns {T}
 */
export function pick(items) {
  return /** @type {T} */ (items[Math.floor(Math.random() * items.length)]);
}

/**
 * JSON request headers, with the API key when given.
 * @param {string} [key]
 * @returns {Record<string, string>}
 */
export function headers(key) {
  /** @type {Record<string, string>} */
  const result = { 'Content-Type': 'application/json' };
  if (key) result.Authorization = `Bearer ${key}`;
  return result;
}

/**
 * `data` of a successful envelope; aborts the test (setup) on anything else.
 * @param {import('k6/http').RefinedResponse<any>} res
 * @param {number} status
 * @param {string} what
 * @returns {any}
 */
export function dataOf(res, status, what) {
  if (res.status !== status) fail(`${what}: expected ${status}, got ${res.status}: ${String(res.body).slice(0, 300)}`);
  return /** @type {any} */ (res.json()).data;
}

/**
 * Registers a fresh user and creates an API key with its login token (API keys cannot create keys).
 * @param {string} label
 * @returns {{ key: string }}
 */
export function createAccount(label) {
  const email = `${label}-${Date.now()}-${Math.floor(Math.random() * 1e9)}@k6.example.com`;
  const registered = http.post(
    `${BASE_URL}/auth/register`,
    JSON.stringify({ name: label, email, password: 'k6 load test password 0123' }),
    { headers: headers() },
  );
  const { token } = dataOf(registered, 201, 'register');
  const created = http.post(`${BASE_URL}/auth/api-keys`, JSON.stringify({ name: label }), { headers: headers(token) });
  return { key: dataOf(created, 201, 'create API key').apiKey.key };
}

/**
 * Creates `count` links through the API with the key and returns what the scripts need of them.
 * @param {string} key
 * @param {number} count
 * @param {string} label
 * @returns {SeededLink[]}
 */
export function createLinks(key, count, label) {
  /** @type {SeededLink[]} */
  const links = [];
  for (let index = 0; index < count; index++) {
    const res = http.post(`${BASE_URL}/links`, JSON.stringify(linkBody(index, `${label} ${index}`)), {
      headers: headers(key),
      tags: { name: 'setup: POST /links' },
    });
    const { link } = dataOf(res, 201, 'create link');
    const url = SHORT_URL_BASE ? `${SHORT_URL_BASE}${pathOf(link.url)}` : link.url;
    links.push({ id: link.id, url, shape: index % 4, index });
  }
  return links;
}
