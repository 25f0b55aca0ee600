import { performance } from 'node:perf_hooks';
import type { Sql } from '@deeplink/core/db';
import type { SeededLink } from '../seed.js';
import { HUMAN_AGENTS } from '../user-agents.js';
import type { Visitor } from '../visitor.js';

/** Redirect-to-rollup delays in milliseconds, and the samples that never showed up in time. */
export interface FreshnessSamples {
  delaysMs: number[];
  timeouts: number;
}

const POLL_MS = 10;

/**
 * For each link (one that has never been visited): one human redirect, then polls click_hourly
 * every POLL_MS until the link's row appears. The delay runs from the moment the answer arrived,
 * so it covers the redirector's buffer, the queue and the worker's transaction.
 */
export async function measureFreshness(
  visitor: Visitor,
  sql: Sql,
  links: readonly SeededLink[],
  onSample: (done: number) => void,
  timeoutMs = 15_000,
): Promise<FreshnessSamples> {
  const result: FreshnessSamples = { delaysMs: [], timeouts: 0 };
  for (const [index, link] of links.entries()) {
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
    onSample(index + 1);
  }
  return result;
}
