// Shared by the k6 scripts: settings from __ENV, the traffic mix, and setup() helpers that create
// an account, an API key and links through the public API, as any integration would.
import http from 'k6/http';
import { fail } from 'k6';

/** @typedef {'android' | 'ios' | 'desktop'} Platform */
/** @typedef {{ userAgent: string, weight: number, bot: boolean, platform: Platform }} Agent */
/** @typedef {{ id: string, url: string, shape: number, index: number }} SeededLink */

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

/** Phones, desktops and link-preview bots, weighted like a campaign's traffic (same mix as the bench). @type {Agent[]} */
export const AGENTS = [
  { weight: 18, bot: false, platform: 'android', userAgent: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36' },
  { weight: 12, bot: false, platform: 'android', userAgent: 'Mozilla/5.0 (Linux; Android 13; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36' },
  { weight: 15, bot: false, platform: 'ios', userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1' },
  { weight: 8, bot: false, platform: 'ios', userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 330.0.0.0 (iPhone15,3; iOS 17_4)' },
  { weight: 20, bot: false, platform: 'desktop', userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36' },
  { weight: 9, bot: false, platform: 'desktop', userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15' },
  { weight: 6, bot: false, platform: 'desktop', userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0' },
  { weight: 4, bot: true, platform: 'desktop', userAgent: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' },
  { weight: 3, bot: true, platform: 'desktop', userAgent: 'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)' },
  { weight: 2, bot: true, platform: 'desktop', userAgent: 'Twitterbot/1.0' },
  { weight: 2, bot: true, platform: 'desktop', userAgent: 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)' },
  { weight: 1, bot: true, platform: 'desktop', userAgent: 'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)' },
];

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
  const registered = http.post(`${BASE_URL}/auth/register`, JSON.stringify({ name: label, email, password: 'k6 load test password 0123' }), { headers: headers() });
  const { token } = dataOf(registered, 201, 'register');
  const created = http.post(`${BASE_URL}/auth/api-keys`, JSON.stringify({ name: label }), { headers: headers(token) });
  return { key: dataOf(created, 201, 'create API key').apiKey.key };
}

/**
 * The body of the index-th link: four shapes in turn, so every routing branch is exercised.
 * 0: every platform and tracking parameters; 1: Android only; 2: desktop; 3: default URL only.
 * @param {number} index
 * @param {string} title
 */
export function linkBody(index, title) {
  const defaultUrl = `https://shop.example.com/products/${index}`;
  const desktopUrl = `https://www.example.com/products/${index}`;
  switch (index % 4) {
    case 0:
      return {
        title, defaultUrl, desktopUrl,
        androidLink: { url: `shop://products/${index}`, appPackageName: 'com.example.shop', minimumVersion: '3.2.0' },
        iosLink: { url: `shop://products/${index}`, bundleId: 'com.example.shop', fallbackUrl: 'https://apps.apple.com/app/id123456789' },
        customParameters: { utm_source: 'k6', utm_campaign: 'load' },
      };
    case 1:
      return { title, defaultUrl, androidLink: { url: `shop://products/${index}`, appPackageName: 'com.example.shop' } };
    case 2:
      return { title, defaultUrl, desktopUrl };
    default:
      return { title, defaultUrl, customParameters: { utm_medium: 'social' } };
  }
}

/**
 * What the redirector must answer for a link of this shape and a visitor on this platform:
 * the status, and the start of the Location header for a 302.
 * @param {SeededLink} link
 * @param {Platform} platform
 * @returns {{ status: number, location?: string }}
 */
export function expectedAnswer(link, platform) {
  const { shape, index } = link;
  if (platform === 'android' && (shape === 0 || shape === 1)) return { status: 302, location: 'intent://' };
  if (platform === 'ios' && shape === 0) return { status: 200 };
  if (platform === 'desktop' && (shape === 0 || shape === 2)) return { status: 302, location: `https://www.example.com/products/${index}` };
  return { status: 302, location: `https://shop.example.com/products/${index}` };
}

/**
 * The path of an absolute URL (k6 has no URL class in every version, so by pattern).
 * @param {string} url
 * @returns {string}
 */
export function pathOf(url) {
  return url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]+/i, '') || '/';
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
    const res = http.post(`${BASE_URL}/links`, JSON.stringify(linkBody(index, `${label} ${index}`)), { headers: headers(key), tags: { name: 'setup: POST /links' } });
    const { link } = dataOf(res, 201, 'create link');
    const url = SHORT_URL_BASE ? `${SHORT_URL_BASE}${pathOf(link.url)}` : link.url;
    links.push({ id: link.id, url, shape: index % 4, index });
  }
  return links;
}
