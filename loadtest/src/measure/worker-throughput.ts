import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import {
  type AppEvent,
  CLICK_BATCH_JOB,
  CLICK_JOB_OPTIONS,
  CLICK_QUEUE,
  type ClickBatch,
  type ClickEvent,
  loadConfig,
  newInstallToken,
  packClickBatch,
  type PackedClickBatch,
  redirectEventId,
} from '@deeplink/core';
import type { Sql } from '@deeplink/core/db';
import { createRedis } from '@deeplink/core/redis';
import { Queue } from 'bullmq';
import { HUMAN_AGENTS, pickAgent, seededRandom } from '../user-agents.js';

/** Progress of the worker at one moment: clicks rolled up so far. */
export interface ProgressSample {
  atMs: number;
  done: number;
}

/** Clicks per job as the redirector queues them under load (its default CLICK_BATCH_SIZE). */
const REDIRECTOR_BATCH_SIZE = loadConfig({}).CLICK_BATCH_SIZE;

const REFERRERS = ['', '', 'https://t.co/x', 'https://www.facebook.com/', 'https://www.google.com/', 'https://l.instagram.com/'];
const HOUR_MS = 3_600_000;
/** The Android phones of the mix: who a link sends to the Play Store. */
const ANDROID_AGENTS = HUMAN_AGENTS.filter((agent) => / Android .* Mobile/.test(agent.userAgent));

/** Address, agent and referrer of a visit, from a random number source. */
export type VisitMaker = (random: () => number) => Pick<ClickEvent, 'ip' | 'userAgent' | 'referrer'>;

/** Address, agent and referrer of a synthetic human visit from one of 4,000 client addresses (`address`). */
function visitor(random: () => number, address: number): Pick<ClickEvent, 'ip' | 'userAgent' | 'referrer'> {
  return {
    ip: `${11 + (address % 200)}.${(address * 7) % 256}.${(address * 13) % 256}.${address % 250}`,
    userAgent: pickAgent(HUMAN_AGENTS, random()).userAgent,
    referrer: REFERRERS[Math.floor(random() * REFERRERS.length)]!,
  };
}

/**
 * Batches shaped like the redirector's: CLICK_BATCH_SIZE clicks from the last few seconds, human
 * agents, a few thousand client addresses, and links skewed towards a few popular ones. With
 * `installShare`, that share of the clicks are Android phones sent to the Play Store with an
 * install token, each with its REDIRECT as the redirector queues it (the same clicks otherwise:
 * with no share, no random number is drawn for it).
 */
export function* clickBatches(
  linkIds: readonly string[],
  clicks: number,
  batchSize = REDIRECTOR_BATCH_SIZE,
  now = Date.now(),
  installShare = 0,
): Generator<ClickBatch> {
  const random = seededRandom(7);
  for (let sent = 0; sent < clicks; sent += batchSize) {
    const batchId = randomUUID();
    const batch: ClickEvent[] = [];
    const appEvents: AppEvent[] = [];
    for (let i = 0; i < Math.min(batchSize, clicks - sent); i++) {
      const address = Math.floor(random() * 4000);
      const linkId = linkIds[Math.floor(random() ** 3 * linkIds.length)]!;
      const ts = now - Math.floor(random() * 5000);
      const visit = { linkId, ts, ...visitor(random, address) };
      if (installShare > 0 && random() < installShare) {
        visit.userAgent = pickAgent(ANDROID_AGENTS, random()).userAgent;
        const install = { token: newInstallToken(), language: 'en' };
        appEvents.push({ eventId: redirectEventId(batchId, i), name: 'REDIRECT', platform: 'ANDROID', linkId, ts, clickIndex: i, install });
      }
      batch.push(visit);
    }
    yield appEvents.length > 0 ? { batchId, clicks: batch, appEvents } : { batchId, clicks: batch };
  }
}

/** Hours of the year that yearOfClickBatches covers: the current one and the 365 days before it. */
export const YEAR_HOURS = 365 * 24 + 1;

/** The present mix's visits: its human agents and few referrers, from 4,000 client addresses. */
const mixVisit: VisitMaker = (random) => visitor(random, Math.floor(random() * 4000));

/**
 * A year of one link's traffic, `clicksPerHour` human clicks in every hour up to now, in
 * redirector-sized batches, each visit made by `visits` (the present mix by default). Rolled up
 * by a real worker, it fills every rollup table the way production traffic does, whatever tables
 * the worker writes.
 */
export function* yearOfClickBatches(
  linkId: string,
  clicksPerHour: number,
  now = Date.now(),
  visits: VisitMaker = mixVisit,
  batchSize = REDIRECTOR_BATCH_SIZE,
): Generator<ClickBatch> {
  const random = seededRandom(11);
  const last = Math.floor(now / HOUR_MS) * HOUR_MS;
  let batch: ClickEvent[] = [];
  for (let hour = last - (YEAR_HOURS - 1) * HOUR_MS; hour <= last; hour += HOUR_MS) {
    const span = Math.min(HOUR_MS, now - hour + 1);
    for (let i = 0; i < clicksPerHour; i++) {
      batch.push({ linkId, ts: hour + Math.floor(random() * span), ...visits(random) });
      if (batch.length === batchSize) {
        yield { batchId: randomUUID(), clicks: batch };
        batch = [];
      }
    }
  }
  if (batch.length > 0) yield { batchId: randomUUID(), clicks: batch };
}

/** Adds the batches to the click queue under `prefix`, packed as the redirector would; returns the job count. */
export async function fillClickQueue(redisUrl: string, prefix: string, batches: Iterable<ClickBatch>): Promise<number> {
  const connection = createRedis(redisUrl, { maxRetriesPerRequest: null, enableAutoPipelining: false });
  const queue = new Queue<PackedClickBatch>(CLICK_QUEUE, { connection, prefix });
  let jobs = 0;
  try {
    let chunk: PackedClickBatch[] = [];
    const flush = async () => {
      await queue.addBulk(chunk.map((data) => ({ name: CLICK_BATCH_JOB, data, opts: { ...CLICK_JOB_OPTIONS, jobId: data.batchId } })));
      jobs += chunk.length;
      chunk = [];
    };
    for (const batch of batches) {
      chunk.push(packClickBatch(batch));
      if (chunk.length === 50) await flush();
    }
    if (chunk.length > 0) await flush();
  } finally {
    await queue.close();
    connection.disconnect();
  }
  return jobs;
}

/**
 * Clicks per second from progress samples: all the clicks, over the time from the last sample
 * that saw none to the first that saw them all. Conservative by at most one polling interval.
 * Undefined until the samples show both ends.
 */
export function throughputFromSamples(
  samples: readonly ProgressSample[],
  expected: number,
): { clicksPerSecond: number; seconds: number } | undefined {
  const first = samples.findIndex((s) => s.done > 0);
  const last = samples.findIndex((s) => s.done >= expected);
  if (first < 1 || last < first) return undefined;
  const seconds = (samples[last]!.atMs - samples[first - 1]!.atMs) / 1000;
  return { clicksPerSecond: samples[last]!.done / seconds, seconds };
}

/**
 * Polls processed_batches (written by the worker in each batch's transaction) until `expected`
 * clicks are in, then reads the rollup totals of `linkIds`, which must then hold exactly `expected`.
 */
export async function watchWorker(
  sql: Sql,
  linkIds: readonly string[],
  expected: number,
  onProgress: (done: number) => void,
  stallMs = 60_000,
): Promise<{ samples: ProgressSample[]; rolledUp: number }> {
  const samples: ProgressSample[] = [];
  let lastChange = performance.now();
  for (;;) {
    const [row] = await sql<[{ done: number }]>`SELECT coalesce(sum(clicks), 0)::bigint AS done FROM processed_batches`;
    const sample = { atMs: performance.now(), done: Number(row.done) };
    if (sample.done !== samples.at(-1)?.done) lastChange = sample.atMs;
    samples.push(sample);
    onProgress(sample.done);
    if (sample.done >= expected) break;
    if (sample.atMs - lastChange > stallMs) throw new Error(`the worker stalled at ${sample.done} of ${expected} clicks`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const [totals] = await sql<[{ clicks: number }]>`
    SELECT coalesce(sum(clicks), 0)::bigint AS clicks FROM click_hourly WHERE link_id = ANY(${linkIds as string[]}::uuid[])`;
  return { samples, rolledUp: Number(totals.clicks) };
}
