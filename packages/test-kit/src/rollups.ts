// Clicks written straight into the rollups, for tests of what reads them (the API's analytics):
// the repository the worker writes with, without the queue, the worker or User-Agent strings.
import { randomUUID } from 'node:crypto';
import type { DimensionName, Platform } from '@deeplink/core';
import { type RollupClick, type RollupPreview, rollupsRepository, type Sql } from '@deeplink/core/db';

const HOUR_MS = 3_600_000;
const BATCH_CLICKS = 1_000;

/** What a click's agent tells the rollups, spelled as the worker stores it (services/worker/src/click-enricher.ts). */
export interface AgentValues {
  platform: Platform;
  browser: string;
  os: string;
  device: 'Mobile' | 'Desktop';
}

/** The worker's values for a desktop Chrome on Windows: every click's agent unless a test says otherwise. */
export const DESKTOP_CHROME: AgentValues = { platform: 'desktop', browser: 'Chrome', os: 'Windows', device: 'Desktop' };
/** The worker's values for Chrome on an Android phone. */
export const ANDROID_CHROME: AgentValues = { platform: 'android', browser: 'Chrome', os: 'Android', device: 'Mobile' };
/** The worker's values for Safari on an iPhone. */
export const IPHONE_SAFARI: AgentValues = { platform: 'ios', browser: 'Mobile Safari', os: 'iOS', device: 'Mobile' };

/** The visitor every click has unless a test gives another: one person coming back. */
export const DEFAULT_VISITOR = 'visitor-1';

/**
 * A click's dimension values and visitor as the worker stores them: `country` an ISO code or
 * `Unknown`, `referrer` a lower-case host or `direct`, `visitor` any string without a space (the
 * unique-visitor sketches count distinct ones).
 */
export type ClickValues = Partial<Record<DimensionName, string> & AgentValues & { visitor: string }>;

/** The values of a click a test leaves unsaid: desktop Chrome from the US, direct, DEFAULT_VISITOR. */
export const DEFAULT_CLICK: Required<ClickValues> = { ...DESKTOP_CHROME, country: 'US', referrer: 'direct', visitor: DEFAULT_VISITOR };

const hourOf = (at: number | string): number => {
  const ms = typeof at === 'number' ? at : Date.parse(at);
  if (!Number.isFinite(ms)) throw new Error(`not a time: ${at}`);
  return Math.floor(ms / HOUR_MS) * HOUR_MS;
};

/** A click on `linkId` at `at` (epoch ms or ISO string) as the worker rolls it up, DEFAULT_CLICK where `values` say nothing. */
export function rollupClick(linkId: string, at: number | string, values: ClickValues = {}): RollupClick {
  const { visitor, ...dimensions } = { ...DEFAULT_CLICK, ...values };
  // The repository joins an hour's visitors with spaces: one with a space would count as several.
  if (visitor.includes(' ')) throw new Error(`a visitor holds no space: ${JSON.stringify(visitor)}`);
  return { linkId, bucket: hourOf(at), visitor, dimensions };
}

/** A link-preview crawler's visit to `linkId` at `at`, counted as a preview. */
export function rollupPreview(linkId: string, at: number | string): RollupPreview {
  return { linkId, bucket: hourOf(at) };
}

/**
 * Adds clicks and previews to the rollups, every one committed when this resolves: in batches of
 * at most BATCH_CLICKS (one statement of tens of thousands of rows is slower than several), the
 * previews with the first.
 */
export async function recordClicks(sql: Sql, clicks: readonly RollupClick[], previews: readonly RollupPreview[] = []): Promise<void> {
  const rollups = rollupsRepository(sql);
  for (let start = 0; start === 0 || start < clicks.length; start += BATCH_CLICKS) {
    const batch = { clicks: clicks.slice(start, start + BATCH_CLICKS), previews: start === 0 ? [...previews] : [] };
    const recorded = await rollups.recordBatch({
      batchId: randomUUID(),
      receivedClicks: batch.clicks.length + batch.previews.length,
      ...batch,
    });
    if (!recorded) throw new Error('a batch was not recorded');
  }
}
