import type { HttpFigure } from '../report.js';
import { measureAtRate, measureInterleaved, type HttpRun } from './http.js';

/** The authenticated reads measured: the cheapest (one row by key) and the link list (two queries). */
export const API_READS = { me: '/api/auth/me', links: '/api/links' } as const;
export type ApiRead = keyof typeof API_READS;

/** One authenticated read at full speed and held at half that rate. */
export interface ApiReadFigure {
  path: string;
  max: HttpFigure;
  halfRate: HttpFigure & { targetRps: number; delayMs: number };
}

/**
 * The API's cost per authenticated request: each read sent with a login token (`Authorization:
 * Bearer`, as the dashboard sends it) at full speed, then at half that rate for its latency.
 * Every request after the first finds the token verified (the API's token cache) and its version
 * in Redis, so this is the steady state of a signed-in client.
 */
export async function measureApiReads(
  run: Omit<HttpRun, 'requests'>,
  token: string,
  onRun: (text: string) => void,
): Promise<Record<ApiRead, ApiReadFigure>> {
  const figures = {} as Record<ApiRead, ApiReadFigure>;
  for (const [read, path] of Object.entries(API_READS) as [ApiRead, string][]) {
    const requests = [{ path, userAgent: 'deeplink-bench', headers: { Authorization: `Bearer ${token}` } }];
    const { [read]: max } = await measureInterleaved([{ name: read, url: run.url }], { ...run, requests }, 1, onRun);
    onRun(`${path} at half rate`);
    const halfRate = await measureAtRate({ ...run, requests }, `api-${read}-half`, max.requestsPerSecond / 2);
    figures[read] = { path, max, halfRate };
  }
  return figures;
}
