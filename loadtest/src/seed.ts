import type { CreateLinkBody } from '@deeplink/core';
import type { Sql } from '@deeplink/core/db';
import { linkBody } from '../k6/lib/traffic.js';

/** An account the bench drives the API with: `key` is an API key, as an integration would use; `token` its login token. */
export interface ApiSession {
  baseUrl: string;
  key: string;
  token: string;
}

/** A link as the bench needs it: its id for analytics, its code for the redirector. */
export interface SeededLink {
  id: string;
  code: string;
}

/** Calls the API and returns `data` of the envelope; throws with the status and body otherwise. */
export async function apiCall<T>(
  baseUrl: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown } = {},
): Promise<T> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      ...(options.body !== undefined && { 'content-type': 'application/json' }),
      ...(options.token && { authorization: `Bearer ${options.token}` }),
    },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 500)}`);
  return (JSON.parse(text) as { data: T }).data;
}

/** Registers a user and creates an API key with its login token (API keys cannot create keys). */
export async function createSession(baseUrl: string, label: string): Promise<ApiSession> {
  const email = `${label}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@bench.example.com`;
  const { token } = await apiCall<{ token: string }>(baseUrl, 'POST', '/auth/register', {
    body: { name: 'Bench', email, password: 'bench password 0123456789' },
  });
  const { apiKey } = await apiCall<{ apiKey: { key: string } }>(baseUrl, 'POST', '/auth/api-keys', { token, body: { name: label } });
  return { baseUrl, key: apiKey.key, token };
}

/**
 * Gives the session's account the custom domain `hostname`, active at once: written straight into
 * the bench's database, as DNS verification would leave it (the bench has no DNS to prove it with).
 */
export async function activateDomain(sql: Sql, session: ApiSession, hostname: string): Promise<void> {
  const { user } = await apiCall<{ user: { id: string } }>(session.baseUrl, 'GET', '/auth/me', { token: session.token });
  await sql`INSERT INTO domains (user_id, hostname, verification_token, verified_at) VALUES (${user.id}, ${hostname}, 'bench', now())`;
}

/**
 * An Android link whose visitors without the app go to the Play Store (`fallback` 'store': each
 * visit mints an install token) or to a web page ('web'), with the same tracking parameters.
 */
export const androidLinkBody =
  (fallback: 'store' | 'web') =>
  (index: number, title: string): CreateLinkBody => ({
    title,
    defaultUrl: `https://shop.example.com/products/${index}`,
    androidLink: {
      url: `shop://products/${index}`,
      appPackageName: 'com.example.shop',
      ...(fallback === 'web' && { fallbackUrl: `https://shop.example.com/get-the-app/${index}` }),
    },
    customParameters: { utm_source: 'loadtest', utm_campaign: 'spring' },
  });

/**
 * Creates `count` links through the API (on `domain`, an active custom domain, when given; shaped
 * by `body`, else by the k6 scripts' four shapes), `concurrency` requests at a time, in index order.
 */
export async function createLinks(
  session: ApiSession,
  count: number,
  label: string,
  {
    concurrency = 8,
    domain,
    body = linkBody,
  }: { concurrency?: number; domain?: string; body?: (index: number, title: string) => CreateLinkBody } = {},
): Promise<SeededLink[]> {
  const links: SeededLink[] = new Array(count);
  let next = 0;
  const lane = async () => {
    for (let index = next++; index < count; index = next++) {
      const { link } = await apiCall<{ link: { id: string; url: string } }>(session.baseUrl, 'POST', '/links', {
        token: session.key,
        // By default the k6 scripts' four link shapes, so every routing branch is exercised.
        body: { ...body(index, `${label} ${index}`), ...(domain && { domain }) } satisfies CreateLinkBody,
      });
      links[index] = { id: link.id, code: new URL(link.url).pathname.slice(1) };
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  return links;
}

/** totalClicks of a link's report between two instants, as the analytics API computes it. */
export async function reportedClicks(session: ApiSession, linkId: string, from: Date, to: Date): Promise<number> {
  const query = new URLSearchParams({ startDate: from.toISOString(), endDate: to.toISOString(), timeBucket: 'day' });
  const { analytics } = await apiCall<{ analytics: { totalClicks: number } }>(
    session.baseUrl,
    'GET',
    `/analytics/links/${linkId}?${query}`,
    { token: session.key },
  );
  return analytics.totalClicks;
}
