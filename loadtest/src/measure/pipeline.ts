import { performance } from 'node:perf_hooks';
import type { Sql } from '@deeplink/core/db';
import type { SeededLink } from '../seed.js';
import { type CpuCost, type CpuPart, startCpuCost } from './cpu-cost.js';
import { connectionsForRate, summarize } from '../stats.js';
import { HUMAN_AGENTS } from '../user-agents.js';
import type { Visitor } from '../visitor.js';
import { errorCount, runWrk, writeWrkScript, type WrkRequest } from '../wrk.js';
import { metricValue, type QueueCounts, waitForDrain } from './drain.js';
import { HALF_RATE_DELAY_MS } from './http.js';

/** What a rate must keep up for a step to hold. */
export const PIPELINE_CRITERIA = {
  freshnessP99Ms: 1000,
  /** The oldest batch waiting in the queue, at any sample of the step. */
  maxQueueLagMs: 5000,
} as const;

/** A step that delivered less than this much more than the one before ends the stepping. */
const MIN_GROWTH = 1.05;

const CALIBRATION_MS = 2000;

/** wrk's rate grows with its connections: the connections that would have delivered `targetRps`. */
const scaledConnections = (connections: number, targetRps: number, deliveredRps: number): number =>
  Math.min(5000, Math.max(1, Math.round((connections * targetRps) / Math.max(1, deliveredRps))));

/** One rate held (or not) for one step. */
export interface PipelineStep {
  targetRps: number;
  /** What wrk delivered. */
  requestsPerSecond: number;
  requests: number;
  errors: number;
  connections: number;
  /** The oldest waiting batch's age, the highest of the once-a-second samples, in ms. */
  maxQueueLagMs: number;
  /** Redirect → rollup delays of the probe visits sent during the step. */
  freshness: { samples: number; p50Ms: number; p99Ms: number; timeouts: number };
  /** Redirects (and in-app pages) the redirector answered during the step, by its own count: wrk's leaves out the answers in flight when it stops. */
  answered: number;
  /** Redirects answered minus clicks in the rollups once the queue drained after the step. */
  loss: number;
  /** Redirects answered in each whole minute of the step, per second: a rate that decays shows here. */
  ratesByMinute: number[];
  /** CPU spent per click by each part of the stack, from the step's start until its clicks were rolled up. */
  cpu?: CpuCost;
  held: boolean;
  /** The criteria a step missed. */
  misses: string[];
}

/** The pipeline row: the highest rate the whole stack held, and every step tried. */
export interface PipelineFigure {
  /** Delivered req/s of the highest step that held; null when none did. */
  heldRps: number | null;
  /** Why no higher rate was tried. */
  stoppedBecause: string;
  stepMs: number;
  steps: PipelineStep[];
  /** Peak RSS of the worker that rolled the steps up, in MB. */
  workerPeakRssMB: number;
}

export interface PipelineRun {
  /** The redirector's origin. */
  url: string;
  /** The redirector's /metrics, on its metrics listener. */
  metricsUrl: string;
  sql: Sql;
  counts: QueueCounts;
  /** The links wrk rotates through; nothing else visits them. */
  links: readonly SeededLink[];
  /** Visited alone, one visit at a time, to time redirect → rollup under load. */
  probe: SeededLink;
  visitor: Visitor;
  /** Folder for the wrk script. */
  dir: string;
  stepMs: number;
  startRps: number;
  /** Each step's rate is the previous one's times this. */
  factor: number;
  maxSteps: number;
  wrkCpus?: string;
  /** The processes whose CPU time each step charges to its clicks (none: not measured). */
  cpuParts?: readonly CpuPart[];
  /** The Redis the stack uses, for its per-command times. */
  redisUrl?: string;
  onProgress: (text: string) => void;
}

/** Every link once per human agent: all of wrk's visits count as clicks. */
export const humanRotation = (links: readonly Pick<SeededLink, 'code'>[]): WrkRequest[] =>
  HUMAN_AGENTS.flatMap((agent) => links.map((link) => ({ path: `/${link.code}`, userAgent: agent.userAgent })));

/** The redirector's count so far of answers that record a click: redirects, and pages for in-app browsers. */
async function redirectsAnswered(metricsUrl: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  const answers = (status: number) => metricValue(text, 'redirector_responses_total', `status="${status}"`) ?? 0;
  return answers(302) + answers(200);
}

async function rolledUp(sql: Sql, linkIds: string[]): Promise<number> {
  const [row] = await sql<
    { n: number }[]
  >`SELECT coalesce(sum(clicks), 0)::bigint AS n FROM click_daily WHERE link_id = ANY(${linkIds}::uuid[])`;
  return row!.n;
}

/** A counter read at a moment (performance.now() milliseconds). */
export interface CounterSample {
  at: number;
  value: number;
}

/**
 * The counter's rate per second over each whole minute of the samples, from the sample nearest
 * each minute's start to the one nearest its end; one figure over all of them when they span less.
 */
export function ratesByMinute(samples: readonly CounterSample[]): number[] {
  if (samples.length < 2) return [];
  const first = samples[0]!;
  const last = samples.at(-1)!;
  const rate = (from: CounterSample, to: CounterSample) => ((to.value - from.value) * 1000) / Math.max(1, to.at - from.at);
  const minutes = Math.floor((last.at - first.at) / 60_000);
  if (minutes === 0) return [rate(first, last)];
  const nearest = (at: number) => samples.reduce((best, sample) => (Math.abs(sample.at - at) < Math.abs(best.at - at) ? sample : best));
  return Array.from({ length: minutes }, (_, minute) =>
    rate(nearest(first.at + minute * 60_000), nearest(first.at + (minute + 1) * 60_000)),
  );
}

/** Repeats `work` until `done()` says stop. */
async function whileRunning(done: () => boolean, work: () => Promise<void>): Promise<void> {
  while (!done()) await work();
}

/** The criteria a step missed, empty when it held. */
export function stepMisses(step: Omit<PipelineStep, 'held' | 'misses'>): string[] {
  const misses: string[] = [];
  if (step.errors > 0) misses.push(`${step.errors} wrk errors`);
  if (step.loss !== 0) misses.push(`loss ${step.loss}`);
  if (step.freshness.samples === 0 || step.freshness.timeouts > 0 || step.freshness.p99Ms > PIPELINE_CRITERIA.freshnessP99Ms) {
    misses.push(
      `freshness p99 ${Math.round(step.freshness.p99Ms)} ms (${step.freshness.samples} samples, ${step.freshness.timeouts} timed out)`,
    );
  }
  if (step.maxQueueLagMs > PIPELINE_CRITERIA.maxQueueLagMs) misses.push(`queue lag ${Math.round(step.maxQueueLagMs)} ms`);
  return misses;
}

/**
 * Steps the rate up (startRps, then × factor) with the redirector and the worker running together,
 * each step for stepMs: wrk holds the rate (a pause after every answer, as in the half-rate run)
 * while the queue's oldest waiting batch is sampled every second and a probe link is visited
 * one visit at a time, each timed until its click is in the rollups. After each step the queue
 * drains and the rollups must hold exactly the redirects answered. Stops at the first step that
 * does not hold.
 */
export async function measurePipeline(run: PipelineRun): Promise<Omit<PipelineFigure, 'workerPeakRssMB'>> {
  const script = writeWrkScript(`${run.dir}/pipeline.lua`, humanRotation(run.links), HALF_RATE_DELAY_MS);
  // The probe's visits are redirects and clicks like the rest: counted on both sides.
  const linkIds = [...run.links, run.probe].map((link) => link.id);
  const probeAgent = HUMAN_AGENTS[0]!.userAgent;
  const steps: PipelineStep[] = [];
  let stoppedBecause = `the last of ${run.maxSteps} steps held (BENCH_PIPELINE_STEPS)`;
  let targetRps = run.startRps;
  // A short unmeasured run finds how many connections deliver the first rate (the guess assumes
  // answers take no time); its clicks are rolled up before the first step counts anything.
  const guess = connectionsForRate(targetRps, HALF_RATE_DELAY_MS, 0.2);
  run.onProgress('calibrating wrk');
  const calibration = await runWrk({ url: run.url, script, connections: guess, durationMs: CALIBRATION_MS, cpus: run.wrkCpus });
  await waitForDrain(run.counts, run.metricsUrl, () => {});
  let connections = scaledConnections(guess, targetRps, calibration.requestsPerSecond);

  for (let n = 1; n <= run.maxSteps; n++) {
    run.onProgress(`step ${n}: ${Math.round(targetRps).toLocaleString('en-US')} req/s for ${run.stepMs / 1000} s`);
    const before = { rolledUp: await rolledUp(run.sql, linkIds), answered: await redirectsAnswered(run.metricsUrl) };
    const cost = run.cpuParts && run.redisUrl ? await startCpuCost(run.cpuParts, run.redisUrl) : undefined;
    let finished = false;
    const lags: number[] = [];
    /** The redirector's answer count, about once a second. */
    const answeredSamples: CounterSample[] = [];
    const delays: number[] = [];
    let timeouts = 0;
    const sampling = whileRunning(
      () => finished,
      async () => {
        lags.push(await run.counts.oldestWaitingAgeMs());
        answeredSamples.push({ value: await redirectsAnswered(run.metricsUrl), at: performance.now() });
        await new Promise((resolve) => setTimeout(resolve, 1000));
      },
    );
    const probing = whileRunning(
      () => finished,
      async () => {
        const seen = await rolledUp(run.sql, [run.probe.id]);
        await run.visitor.visit(`/${run.probe.code}`, probeAgent);
        const answeredAt = performance.now();
        for (;;) {
          const elapsed = performance.now() - answeredAt;
          if ((await rolledUp(run.sql, [run.probe.id])) > seen) {
            delays.push(elapsed);
            break;
          }
          if (elapsed > 10_000) {
            timeouts++;
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      },
    );
    const result = await runWrk({ url: run.url, script, connections, durationMs: run.stepMs, cpus: run.wrkCpus }).finally(() => {
      finished = true;
    });
    await Promise.all([sampling, probing]);
    run.onProgress(`step ${n}: draining the queue`);
    await waitForDrain(run.counts, run.metricsUrl, (pending) =>
      run.onProgress(`step ${n}: ${pending.toLocaleString('en-US')} batches left`),
    );
    const answered = (await redirectsAnswered(run.metricsUrl)) - before.answered;
    const fresh = summarize(delays);
    const step = {
      targetRps,
      requestsPerSecond: result.requestsPerSecond,
      requests: result.requests,
      errors: errorCount(result),
      connections,
      maxQueueLagMs: Math.max(0, ...lags),
      freshness: { samples: fresh.count, p50Ms: fresh.p50, p99Ms: fresh.p99, timeouts },
      answered,
      loss: answered - ((await rolledUp(run.sql, linkIds)) - before.rolledUp),
      ratesByMinute: ratesByMinute(answeredSamples),
      cpu: await cost?.(answered),
    };
    const misses = stepMisses(step);
    steps.push({ ...step, held: misses.length === 0, misses });
    if (misses.length > 0) {
      stoppedBecause = `${Math.round(step.requestsPerSecond).toLocaleString('en-US')} req/s missed: ${misses.join('; ')}`;
      break;
    }
    // The rate is what wrk delivers; once more connections bring no more, the machine is full
    // (wrk shares its cores with the stack), and that rate is what it holds.
    const previous = steps.at(-2);
    if (previous && step.requestsPerSecond < previous.requestsPerSecond * MIN_GROWTH) {
      stoppedBecause = 'the delivered rate stopped growing: the machine is busy with all of it';
      break;
    }
    targetRps *= run.factor;
    connections = scaledConnections(connections, targetRps, result.requestsPerSecond);
  }
  const heldRates = steps.filter((step) => step.held).map((step) => step.requestsPerSecond);
  return { heldRps: heldRates.length > 0 ? Math.max(...heldRates) : null, stoppedBecause, stepMs: run.stepMs, steps };
}
