import { type ClickBatch, type ClickBatchFormats, type ClickEvent, readClickJobData } from '@deeplink/core';
import type { RollupAppEvent, RollupBatch, RollupInstallClick, RollupPreview } from '@deeplink/core/db';
import { appEventOf, previewOf, type ClickEnricher, type EnrichedClick } from './click-enricher.js';
import type { InstallClickOf } from './install-clicks.js';
import { LiveClicks, type LivePublisher } from './live-clicks.js';
import type { RollupWriter } from './rollup-writer.js';

const MAX_BATCH_ID_LENGTH = 200;

/** What happened to one batch. */
export interface BatchOutcome {
  /** False when the batch id had been rolled up before, so nothing was added. */
  recorded: boolean;
  received: number;
  /** Clicks left after dropping bots and malformed events (deleted links are dropped in SQL). */
  counted: number;
}

/**
 * The clicks of a job's batch, read with the reader its format names, or why the data can never
 * succeed (no batch, a format this worker does not read, an id PostgreSQL cannot hold) and so is not retried.
 */
export function readClickBatch(data: unknown, formats: ClickBatchFormats): { batch: ClickBatch } | { problem: string } {
  const reading = readClickJobData(data, formats);
  if (!('batch' in reading)) return reading;
  const { batchId } = reading.batch;
  // PostgreSQL text cannot hold NUL; such an id would fail every attempt.
  const usableId = batchId.length > 0 && batchId.length <= MAX_BATCH_ID_LENGTH && !batchId.includes('\u0000');
  return usableId ? { batch: reading.batch } : { problem: 'job data is not a click batch: its id cannot be stored' };
}

/**
 * Enriches and records one batch; a database error propagates so the job is retried. `read` gives
 * the batch from the job's data each time it is called: the enriched clicks are summed into the
 * next transaction and dropped, and built again from the job only if the batch must be written on
 * its own, so a worker holding hundreds of batches keeps their sums rather than their clicks.
 */
export function createBatchRollup(deps: {
  enrich: ClickEnricher;
  /** The click's visitor hash, as the enricher gives it: for a REDIRECT whose click is not counted (a bot's). */
  clickVisitor: (click: ClickEvent) => string;
  installClickOf: InstallClickOf;
  writer: RollupWriter;
  /** Given the clicks of each batch recorded now, after its commit, for the live streams. */
  live?: LivePublisher;
}) {
  /** The batch's rollup fields; its counted clicks are also added to `live` when given. */
  const enrichAll = (batch: ClickBatch, live?: LiveClicks): RollupBatch => {
    const counted: EnrichedClick[] = [];
    const previews: RollupPreview[] = [];
    // The visitor of each counted click, by its index, kept only for a batch with app events (a
    // REDIRECT counts as its click's visitor): a plain batch allocates nothing more.
    const visitors: (string | undefined)[] | undefined = batch.appEvents?.length ? new Array(batch.clicks.length) : undefined;
    for (let i = 0; i < batch.clicks.length; i++) {
      const click = batch.clicks[i]!;
      const enriched = deps.enrich(click);
      if (enriched) {
        counted.push(enriched);
        live?.add(click.ts, enriched);
        if (visitors) visitors[i] = enriched.visitor;
      } else {
        const preview = previewOf(click);
        if (preview) previews.push(preview);
      }
    }
    const events: RollupAppEvent[] = [];
    // Only a batch with a store visit that handed out an install token has any.
    let installs: RollupInstallClick[] | undefined;
    for (const event of batch.appEvents ?? []) {
      // The click the event came with: its visitor is the event's, its address and agent give an install's fingerprint facts.
      const click = event.clickIndex === undefined ? undefined : batch.clicks[event.clickIndex];
      const placed = appEventOf(event, click && (visitors?.[event.clickIndex!] ?? deps.clickVisitor(click)));
      if (!placed) continue;
      events.push(placed);
      if (event.install === undefined) continue;
      const install = deps.installClickOf(event, click);
      if (install) (installs ??= []).push(install);
    }
    const rolled: RollupBatch = { batchId: batch.batchId, receivedClicks: batch.clicks.length, clicks: counted, previews, events };
    if (installs) rolled.installs = installs;
    return rolled;
  };
  return async (read: () => ClickBatch): Promise<BatchOutcome> => {
    const live = deps.live && new LiveClicks();
    const batch = enrichAll(read(), live);
    const outcome = { received: batch.receivedClicks, counted: batch.clicks.length };
    const written = deps.writer.write(batch, () => enrichAll(read()));
    const recorded = await written;
    // Only a batch recorded now: a repeated one added nothing.
    if (recorded && live) deps.live!.publish(live);
    return { recorded, ...outcome };
  };
}
