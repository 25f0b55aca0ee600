// The query link's year of traffic: visits shaped like a real campaign's, so that the combination
// rollups hold as many combinations as a busy link's would. About 40 countries, 12 browsers on
// 6 operating systems and 50 referring hosts, correlated as real traffic is: an iPhone runs
// Mobile Safari (or an app's in-app browser) on iOS, Instagram's browser arrives from
// l.instagram.com, iPhones are commoner in the US and Japan than in India or Brazil. Countries
// come from the worker's own GeoIP lookup of each visit's address, as in production.
import type { ClickEvent } from '@deeplink/core';
import { openGeoIp } from '../../services/worker/src/geoip.js';
import { type AgentShare, pickWeighted } from './user-agents.js';

/** A human visit's agent in the year's mix, with what it is for the report. */
interface YearAgent extends AgentShare {
  platform: 'android' | 'ios' | 'desktop';
  /** In-app browsers come from their app's hosts most of the time. */
  app?: 'instagram' | 'facebook';
}

const agent = (weight: number, platform: YearAgent['platform'], userAgent: string, app?: YearAgent['app']): YearAgent => ({
  weight,
  bot: false,
  platform,
  userAgent,
  ...(app && { app }),
});

/**
 * The agents: the present mix's shares (about 30 % Android, 25 % iOS, the rest desktop) spread
 * over the browsers each platform really has. Browser and OS names are what the worker's
 * ua-parser-js makes of them (12 browsers: Mobile Safari, Chrome, Instagram, Facebook, Samsung
 * Internet, Firefox, Yandex, Chrome WebView, UCBrowser, Edge, Opera, Safari; 6 OS: iOS, Android,
 * Windows, Mac OS, Linux, Chromium OS).
 */
export const YEAR_AGENTS: readonly YearAgent[] = [
  agent(
    12,
    'ios',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  ),
  agent(
    3,
    'ios',
    'Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  ),
  agent(
    4,
    'ios',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 330.0.0.0 (iPhone15,3; iOS 17_4)',
    'instagram',
  ),
  agent(
    2,
    'ios',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/460.0.0.0;FBBV/123;FBDV/iPhone15,3;FBMD/iPhone;FBSN/iOS;FBSV/17.4;FBSS/3;FBCR/;FBID/phone;FBLC/en_US;FBOP/5]',
    'facebook',
  ),
  agent(
    2,
    'ios',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/124.0.6367.111 Mobile/15E148 Safari/604.1',
  ),
  agent(
    13,
    'android',
    'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
  ),
  agent(
    7,
    'android',
    'Mozilla/5.0 (Linux; Android 13; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36',
  ),
  agent(
    3,
    'android',
    'Mozilla/5.0 (Linux; Android 14; SM-A546B Build/UP1A.231005.007; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/124.0.6367.82 Mobile Safari/537.36 Instagram 330.0.0.40.92 Android',
    'instagram',
  ),
  agent(
    2,
    'android',
    'Mozilla/5.0 (Linux; Android 14; Pixel 7 Build/AP1A.240405.002; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/124.0.6367.82 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/460.0.0.48.109;]',
    'facebook',
  ),
  agent(1, 'android', 'Mozilla/5.0 (Android 14; Mobile; rv:125.0) Gecko/125.0 Firefox/125.0'),
  agent(
    1,
    'android',
    'Mozilla/5.0 (Linux; Android 13; SM-A536B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0.6261.128 YaBrowser/24.4.1.99.00 SA/3 Mobile Safari/537.36',
  ),
  agent(
    2,
    'android',
    'Mozilla/5.0 (Linux; Android 12; M2101K6G Build/SKQ1.210908.001; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/124.0.6367.82 Mobile Safari/537.36',
  ),
  agent(
    1,
    'android',
    'Mozilla/5.0 (Linux; U; Android 10; en-US; RMX2185 Build/QP1A.190711.020) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/78.0.3904.108 UCBrowser/13.4.0.1306 Mobile Safari/537.36',
  ),
  agent(16, 'desktop', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36'),
  agent(
    5,
    'desktop',
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.80',
  ),
  agent(3, 'desktop', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0'),
  agent(
    1,
    'desktop',
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 OPR/110.0.0.0',
  ),
  agent(
    5,
    'desktop',
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  ),
  agent(
    4,
    'desktop',
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  ),
  agent(2, 'desktop', 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0'),
  agent(1, 'desktop', 'Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36'),
];

/**
 * Countries by share of visits, and how much likelier than average an iPhone is there (the rest
 * of the mobile visits are Android): 40 countries, a long tail after the first few.
 */
export const YEAR_COUNTRIES: readonly { code: string; weight: number; ios: number }[] = [
  { code: 'US', weight: 22, ios: 1.6 },
  { code: 'IN', weight: 8, ios: 0.2 },
  { code: 'BR', weight: 6, ios: 0.4 },
  { code: 'GB', weight: 5, ios: 1.4 },
  { code: 'DE', weight: 5, ios: 0.9 },
  { code: 'FR', weight: 4, ios: 1 },
  { code: 'JP', weight: 4, ios: 1.8 },
  { code: 'CA', weight: 3, ios: 1.4 },
  { code: 'MX', weight: 3, ios: 0.6 },
  { code: 'ID', weight: 3, ios: 0.2 },
  { code: 'ES', weight: 3, ios: 0.8 },
  { code: 'IT', weight: 3, ios: 0.8 },
  { code: 'TR', weight: 2, ios: 0.5 },
  { code: 'RU', weight: 2, ios: 0.6 },
  { code: 'KR', weight: 2, ios: 0.8 },
  { code: 'AU', weight: 2, ios: 1.5 },
  { code: 'NL', weight: 2, ios: 1.1 },
  { code: 'PH', weight: 2, ios: 0.5 },
  { code: 'VN', weight: 2, ios: 0.5 },
  { code: 'PL', weight: 2, ios: 0.6 },
  { code: 'AR', weight: 1.5, ios: 0.5 },
  { code: 'CO', weight: 1.5, ios: 0.6 },
  { code: 'NG', weight: 1.5, ios: 0.3 },
  { code: 'EG', weight: 1, ios: 0.3 },
  { code: 'PK', weight: 1, ios: 0.2 },
  { code: 'TH', weight: 1, ios: 0.7 },
  { code: 'SA', weight: 1, ios: 1.2 },
  { code: 'ZA', weight: 1, ios: 0.6 },
  { code: 'SE', weight: 1, ios: 1.2 },
  { code: 'CH', weight: 1, ios: 1.4 },
  { code: 'BE', weight: 1, ios: 1 },
  { code: 'MY', weight: 1, ios: 0.6 },
  { code: 'CL', weight: 1, ios: 0.6 },
  { code: 'PE', weight: 1, ios: 0.5 },
  { code: 'UA', weight: 1, ios: 0.5 },
  { code: 'AT', weight: 0.8, ios: 1.1 },
  { code: 'IE', weight: 0.8, ios: 1.2 },
  { code: 'PT', weight: 0.8, ios: 0.8 },
  { code: 'DK', weight: 0.6, ios: 1.3 },
  { code: 'NZ', weight: 0.6, ios: 1.3 },
];

/** Referring hosts, most common first (their shares fall off as 1/rank); a third of visits have none. */
export const YEAR_REFERRERS: readonly string[] = [
  't.co',
  'www.google.com',
  'l.instagram.com',
  'm.facebook.com',
  'l.facebook.com',
  'www.linkedin.com',
  'www.reddit.com',
  'www.youtube.com',
  'mail.google.com',
  'news.ycombinator.com',
  'www.bing.com',
  'duckduckgo.com',
  'www.tiktok.com',
  't.me',
  'web.whatsapp.com',
  'outlook.live.com',
  'search.yahoo.com',
  'www.pinterest.com',
  'out.reddit.com',
  'lm.facebook.com',
  'discord.com',
  'app.slack.com',
  'teams.microsoft.com',
  'medium.com',
  'substack.com',
  'www.google.de',
  'www.google.co.uk',
  'www.google.fr',
  'www.google.co.jp',
  'www.google.com.br',
  'www.google.co.in',
  'yandex.ru',
  'www.baidu.com',
  'naver.com',
  'news.google.com',
  'flipboard.com',
  'getpocket.com',
  'feedly.com',
  'www.quora.com',
  'www.producthunt.com',
  'github.com',
  'stackoverflow.com',
  'blog.example.com',
  'newsletter.example.com',
  'shop.example.com',
  'partner-one.example.net',
  'partner-two.example.net',
  'deals.example.org',
  'forum.example.org',
  'app.example.io',
];

/** The share of visits without a referrer (direct). */
const DIRECT_SHARE = 0.35;

const REFERRER_MIX = YEAR_REFERRERS.map((host, rank) => ({ host, weight: 1 / (rank + 1) }));
const APP_HOSTS = { instagram: ['l.instagram.com'], facebook: ['m.facebook.com', 'l.facebook.com', 'lm.facebook.com'] } as const;

/** The agent mix of one country: its iPhones made likelier or rarer. */
const agentsOf = (ios: number): YearAgent[] =>
  YEAR_AGENTS.map((share) => ({ ...share, weight: share.platform === 'ios' ? share.weight * ios : share.weight }));

/** Client addresses found per country: distinct visitors come from them. */
const ADDRESSES_PER_COUNTRY = 60;

/**
 * Public IPv4 addresses the worker's GeoIP database (the one that ships from npm: the bench's
 * worker gets no GEOIP_DB) places in each country of YEAR_COUNTRIES, found by looking up one
 * address in each /16 in turn, so the database decides and a newer one still places them.
 */
export async function countryAddresses(): Promise<Map<string, string[]>> {
  const geoip = await openGeoIp();
  const pools = new Map(YEAR_COUNTRIES.map(({ code }) => [code, [] as string[]]));
  for (let c = 1; c < 256; c += 97) {
    for (let a = 1; a < 224; a++) {
      for (let b = 0; b < 256; b++) {
        const ip = `${a}.${b}.${c}.${(a * 7 + b) % 250}`;
        const pool = pools.get(geoip.country(ip));
        if (pool && pool.length < ADDRESSES_PER_COUNTRY) pool.push(ip);
      }
    }
  }
  const missing = [...pools].filter(([, pool]) => pool.length === 0).map(([code]) => code);
  if (missing.length > 0) throw new Error(`the GeoIP database places no address in ${missing.join(', ')}`);
  return pools;
}

const pick = <T>(items: readonly T[], random: number): T => items[Math.floor(random * items.length)]!;

/**
 * A visitor maker for the year's traffic: each call picks a country, then an agent as that
 * country's visitors use them, then a referrer (an in-app browser's own app most of the time).
 */
export function yearVisitors(pools: ReadonlyMap<string, readonly string[]>) {
  const mixes = new Map(YEAR_COUNTRIES.map(({ code, ios }) => [code, agentsOf(ios)]));
  return (random: () => number): Pick<ClickEvent, 'ip' | 'userAgent' | 'referrer'> => {
    const country = pickWeighted(YEAR_COUNTRIES, random());
    const { userAgent, app } = pickWeighted(mixes.get(country.code)!, random());
    const referrer =
      app && random() < 0.8 ? pick(APP_HOSTS[app], random()) : random() < DIRECT_SHARE ? '' : pickWeighted(REFERRER_MIX, random()).host;
    return { ip: pick(pools.get(country.code)!, random()), userAgent, referrer: referrer && `https://${referrer}/` };
  };
}
