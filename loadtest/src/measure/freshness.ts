import { performance } from 'node:perf_hooks';
import type { Sql } from '@deeplink/core/db';
import type { SeededLink } from '../seed.js';
import { HUMAN_AGENTS } from '../user-agents.js';
import type { Visitor } from '../visitor.js';
import { openLiveWaiter } from './live-freshness.js';

/** Redirect-to-rollup delays in milliseconds, and the samples that never showed up in time. */
export interface FreshnessSamples {
  delaysMs: number[];
  timeouts: number;
  /** Redirect-to-live-stream delays (the link's stream, opened before the redirect), and those that never came. */
  liveDelaysMs: number[];
  liveTimeouts: number;
}

const POLL_MS = 10;

/**
 * For each link (one that has never been visited): opens the link's live stream on the API, sends
 * one human redirect, then polls click_hourly every POLL_MS until the link's row appears, and
 * waits for the stream's message. Both delays run from the moment the answer arrived, so they
 * cover the redirector's buffer, the queue and the worker's transaction, and for the stream the
 * worker's publish, Redis and the API.
 */
export async function measureFreshness(
  visitor: Visitor,
  sql: Sql,
  live: { apiUrl: string; token: string },
  links: readonly SeededLink[],
  onSample: (done: number) => void,
  timeoutMs = 15_000,
): Promise<FreshnessSamples> {
  const result: FreshnessSamples = { delaysMs: [], timeouts: 0, liveDelaysMs: [], liveTimeouts: 0 };
  for (const [index, link] of links.entries()) {
    const stream = await openLiveWaiter(live.apiUrl, live.token, link.id);
    const status = await visitor.visit(`/${link.code}`, HUMAN_AGENTS[index % HUMAN_AGENTS.length]!.userAgent);
    if (status !== 302 && status !== 200) throw new Error(`freshness redirect for ${link.code} answered ${status}`);
    const answeredAt = performance.now();
    for (;;) {
      const rows = await sql`SELECT 1 FROM click_hourly WHERE link_id = ${link.id} LIMIT 1`;
      const elapsed = performance.now() - answeredAt;
      if (rows.length > 0) {
        result.delaysMs.push(elapsed);
        break;
      }
      if (elapsed > timeoutMs) {
        result.timeouts++;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    const left = Math.max(0, timeoutMs - (performance.now() - answeredAt));
    const streamed = await Promise.race([
      stream.arrived,
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), left)),
    ]).catch(() => undefined);
    stream.close();
    if (streamed === undefined) result.liveTimeouts++;
    else result.liveDelaysMs.push(streamed - answeredAt);
    onSample(index + 1);
  }
  return result;
}
