import { randomUUID } from 'node:crypto';
import { APP_KEY_HEADER, hashInstallToken, INSTALL_TOKEN_PARAM, INSTALL_TOKEN_TTL_DAYS, newInstallToken } from '@deeplink/core';
import type { Sql } from '@deeplink/core/db';
import type { HttpFigure } from '../report.js';
import { apiCall, type ApiSession, type SeededLink } from '../seed.js';
import type { WrkRequest } from '../wrk.js';
import { measureAtRate, measureInterleaved, type HttpRun } from './http.js';

/** The App SDK calls measured, as an app shipped to users makes them with its publishable key. */
export const APP_SDK_CALLS = { open: '/api/app/open', install: '/api/app/install' } as const;
export type AppSdkCall = keyof typeof APP_SDK_CALLS;

/** One App SDK call at full speed and held at half that rate. */
export interface AppSdkFigure {
  path: string;
  max: HttpFigure;
  halfRate: HttpFigure & { targetRps: number; delayMs: number };
}

const BENCH_PACKAGE = 'com.bench.app';

/** Registers an Android app for the session's account and returns its app key. */
export async function createAppKey(session: ApiSession): Promise<string> {
  const { app } = await apiCall<{ app: { key: string } }>(session.baseUrl, 'POST', '/apps', {
    token: session.token,
    body: { platform: 'android', name: 'Bench', packageName: BENCH_PACKAGE, sha256CertFingerprints: [`${'AB:'.repeat(31)}AB`] },
  });
  return app.key;
}

/**
 * The opens an app reports: a Universal Link or App Link open of each link's short URL, the key
 * looked up by hash, the link read, and the open queued for counting (a BullMQ add per call).
 */
export function openRequests(appKey: string, shortUrlBase: string, links: readonly SeededLink[]): WrkRequest[] {
  return links.map((link) => ({
    path: APP_SDK_CALLS.open,
    method: 'POST',
    userAgent: 'deeplink-bench-app',
    headers: { 'Content-Type': 'application/json', [APP_KEY_HEADER]: appKey },
    body: JSON.stringify({ url: `${shortUrlBase}/${link.code}` }),
  }));
}

/**
 * First launches resolving their install: `count` links for the bench app, each visited once by
 * an Android phone that was handed an install token (its install_clicks row written straight
 * into the bench's database, as the worker writes it), and each install claiming its token with
 * its Play referrer. wrk repeats them, so all but the first call of each are the same install
 * asking again: the claim (one indexed UPDATE that finds the row already its own), the link read
 * and the install's two events queued, as every answered install costs.
 */
export async function installRequests(session: ApiSession, sql: Sql, appKey: string, count: number): Promise<WrkRequest[]> {
  const requests: WrkRequest[] = [];
  for (let i = 0; i < count; i++) {
    const { link } = await apiCall<{ link: { id: string } }>(session.baseUrl, 'POST', '/links', {
      token: session.key,
      body: {
        title: `install ${i}`,
        defaultUrl: 'https://example.com/app',
        androidLink: { url: `bench://item/${i}`, appPackageName: BENCH_PACKAGE },
      },
    });
    const token = newInstallToken();
    await sql`
      INSERT INTO install_clicks (token_hash, link_id, platform, clicked_at, expires_at)
      VALUES (${hashInstallToken(token)}, ${link.id}, 'ANDROID', now(), now() + make_interval(days => ${INSTALL_TOKEN_TTL_DAYS.ANDROID}))`;
    requests.push({
      path: APP_SDK_CALLS.install,
      method: 'POST',
      userAgent: 'deeplink-bench-app',
      headers: { 'Content-Type': 'application/json', [APP_KEY_HEADER]: appKey },
      body: JSON.stringify({ installId: randomUUID(), referrer: `utm_source=bench&${INSTALL_TOKEN_PARAM}=${token}` }),
    });
  }
  return requests;
}

/**
 * What the API answers an app: each call at full speed on the API's core, then at half that rate
 * for its latency. Rate limits must be out of the way (the bench's stack raises them).
 */
export async function measureAppSdk(
  run: Omit<HttpRun, 'requests'>,
  requests: Record<AppSdkCall, WrkRequest[]>,
  onRun: (text: string) => void,
): Promise<Record<AppSdkCall, AppSdkFigure>> {
  const figures = {} as Record<AppSdkCall, AppSdkFigure>;
  for (const [call, path] of Object.entries(APP_SDK_CALLS) as [AppSdkCall, string][]) {
    const callRequests = requests[call];
    const { [call]: max } = await measureInterleaved([{ name: call, url: run.url }], { ...run, requests: callRequests }, 1, onRun);
    onRun(`${path} at half rate`);
    const halfRate = await measureAtRate({ ...run, requests: callRequests }, `app-${call}-half`, max.requestsPerSecond / 2);
    figures[call] = { path, max, halfRate };
  }
  return figures;
}
