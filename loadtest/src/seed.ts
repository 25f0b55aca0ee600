import type { CreateLinkBody, Sql } from '@deeplink/core';
import { linkBody } from '../k6/lib/traffic.js';

/** An account the bench drives the API with: `key` is an API key, as an integration would use. */
export interface ApiSession {
  baseUrl: string;
  key: string;
}

/** A link as the bench needs it: its id for analytics, its code for the redirector. */
export interface SeededLink {
  id: string;
  code: string;
}

/** Calls the API and returns `data` of the envelope; throws with the status and body otherwise. */
export async function apiCall<T>(baseUrl: string, method: string, path: string, options: { token?: string; body?: unknown } = {}): Promise<T> {
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
  return { baseUrl, key: apiKey.key };
}

/** Creates `count` links through the API, `concurrency` requests at a time, in index order. */
export async function createLinks(session: ApiSession, count: number, label: string, concurrency = 8): Promise<SeededLink[]> {
  const links: SeededLink[] = new Array(count);
  let next = 0;
  const lane = async () => {
    for (let index = next++; index < count; index = next++) {
      const { link } = await apiCall<{ link: { id: string; url: string } }>(session.baseUrl, 'POST', '/links', {
        token: session.key,
        // The k6 scripts' four link shapes, so every routing branch is exercised.
        body: linkBody(index, `${label} ${index}`) satisfies CreateLinkBody,
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
    session.baseUrl, 'GET', `/analytics/links/${linkId}?${query}`, { token: session.key },
  );
  return analytics.totalClicks;
}

/** Dimension values written for every hour of the seeded year (a busy link's spread). */
const YEAR_DIMENSIONS: [string, string][] = [
  ['platform', 'android'], ['platform', 'ios'], ['platform', 'desktop'],
  ['device', 'Mobile'], ['device', 'Desktop'],
  ...['US', 'GB', 'DE', 'FR', 'IN', 'BR', 'JP', 'CA', 'ES', 'IT', 'NL', 'Unknown'].map((c): [string, string] => ['country', c]),
  ...['Chrome', 'Mobile Safari', 'Safari', 'Firefox', 'Samsung Internet', 'Edge', 'Instagram'].map((b): [string, string] => ['browser', b]),
  ...['Android', 'iOS', 'Windows', 'Mac OS', 'Linux'].map((o): [string, string] => ['os', o]),
  ...['direct', 't.co', 'www.facebook.com', 'www.google.com', 'l.instagram.com'].map((r): [string, string] => ['referrer', r]),
];

/**
 * Writes a year of hourly rollups for one busy link straight into the tables the worker fills
 * (per hour: one total row with a visitor sketch, and a row for each of the 34 YEAR_DIMENSIONS
 * values), ending with the current hour. Returns the number of hours written.
 */
export async function seedYearOfRollups(sql: Sql, linkId: string, now = new Date()): Promise<number> {
  const end = new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000);
  const start = new Date(end.getTime() - 365 * 24 * 3_600_000);
  const [{ hours }] = await sql<[{ hours: number }]>`
    WITH hours AS (
      SELECT b, 5 + (random() * 40)::int AS visitors
      FROM generate_series(${start}::timestamptz, ${end}::timestamptz, interval '1 hour') AS b
    ), inserted AS (
      INSERT INTO click_hourly (link_id, bucket, clicks, visitors)
      SELECT ${linkId}::uuid, h.b, h.visitors * 2,
             (SELECT hll_add_agg(hll_hash_integer(v)) FROM generate_series(1, h.visitors) AS v)
      FROM hours h
      RETURNING 1
    )
    SELECT count(*)::int AS hours FROM inserted`;
  await sql`
    INSERT INTO click_hourly_dimensions (link_id, bucket, dimension, value, clicks)
    SELECT ${linkId}::uuid, b, d.dimension, d.value, 1 + (random() * 20)::int
    FROM generate_series(${start}::timestamptz, ${end}::timestamptz, interval '1 hour') AS b,
         unnest(${YEAR_DIMENSIONS.map(([d]) => d)}::text[], ${YEAR_DIMENSIONS.map(([, v]) => v)}::text[]) AS d(dimension, value)`;
  // A bulk load leaves the planner without statistics until autovacuum gets to the tables; a
  // long-running deployment has them, so the query is measured with them.
  await sql`ANALYZE click_hourly, click_hourly_dimensions`;
  return hours;
}
