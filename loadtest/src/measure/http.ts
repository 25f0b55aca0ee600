import type { HttpFigure } from '../report.js';
import { connectionsForRate, percentile } from '../stats.js';
import { errorCount, runWrk, writeWrkScript, type WrkRequest, type WrkResult } from '../wrk.js';

/** How a target is loaded: the same for every target, so their figures compare. */
export interface HttpRun {
  url: string;
  requests: readonly WrkRequest[];
  /** Folder for the generated Lua scripts. */
  dir: string;
  connections: number;
  durationMs: number;
  warmupMs: number;
  wrkCpus?: string;
  /** Called about once a second with the seconds elapsed and the run's length. */
  onTick: (elapsedS: number, totalS: number) => void;
}

/** Mean pause after each answer in the half-rate run: long against a redirect, short against wrk's timer tick. */
export const HALF_RATE_DELAY_MS = 10;

async function ticking<T>(work: Promise<T>, durationMs: number, onTick: HttpRun['onTick']): Promise<T> {
  const started = Date.now();
  const totalS = Math.round(durationMs / 1000);
  const timer = setInterval(() => onTick(Math.min(totalS, Math.round((Date.now() - started) / 1000)), totalS), 1000);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}

const figure = (result: WrkResult, connections: number): HttpFigure => ({
  requestsPerSecond: result.requestsPerSecond,
  p50Ms: result.latencyMs.p50,
  p99Ms: result.latencyMs.p99,
  requests: result.requests,
  errors: errorCount(result),
  connections,
});

/** A server measured at full speed; `requests` replaces the run's rotation for this target. */
export interface HttpTarget<Name extends string = string> {
  name: Name;
  url: string;
  requests?: readonly WrkRequest[];
}

/** Rounds the measured time is split into: as asked, but no round shorter than wrk's one second. */
export function roundsFor(durationMs: number, asked: number): number {
  return Math.max(1, Math.min(asked, Math.floor(durationMs / 1000)));
}

/** The order of the targets in a round: rotated by one each round, so none is always first or last. */
export function roundOrder<T>(targets: readonly T[], round: number): T[] {
  const shift = round % targets.length;
  return [...targets.slice(shift), ...targets.slice(0, shift)];
}

/**
 * One target's rounds as one figure: every request over every second measured; the latency
 * percentiles are the median of the rounds' own (wrk reports percentiles, not samples).
 */
export function combineRounds(results: readonly WrkResult[], connections: number): HttpFigure {
  const requests = results.reduce((sum, result) => sum + result.requests, 0);
  const seconds = results.reduce((sum, result) => sum + result.seconds, 0);
  return {
    requestsPerSecond: seconds > 0 ? requests / seconds : 0,
    p50Ms: percentile(
      results.map((result) => result.latencyMs.p50),
      50,
    ),
    p99Ms: percentile(
      results.map((result) => result.latencyMs.p99),
      50,
    ),
    requests,
    errors: results.reduce((sum, result) => sum + errorCount(result), 0),
    connections,
  };
}

/**
 * Every target at full speed, interleaved: after one unmeasured warm-up each, the measured time is
 * split into rounds, and each round runs every target for an equal slice, in a rotated order. On a
 * shared machine whatever changes during the run (another tenant, the CPU clock, Redis growing)
 * then falls on all targets alike, and the ratios between them stay fair.
 */
export async function measureInterleaved<Name extends string>(
  targets: readonly HttpTarget<Name>[],
  run: Omit<HttpRun, 'url' | 'onTick'>,
  rounds: number,
  onRun: (text: string) => void,
): Promise<Record<Name, HttpFigure>> {
  const shared = writeWrkScript(`${run.dir}/full-speed.lua`, run.requests);
  const scripts = new Map(
    targets.map((target) => [
      target.name,
      target.requests ? writeWrkScript(`${run.dir}/full-speed-${target.name}.lua`, target.requests) : shared,
    ]),
  );
  const wrk = (target: HttpTarget<Name>, durationMs: number) =>
    runWrk({ url: target.url, script: scripts.get(target.name)!, connections: run.connections, durationMs, cpus: run.wrkCpus });
  if (run.warmupMs > 0) {
    for (const target of targets) {
      onRun(`warming up ${target.name}`);
      await wrk(target, run.warmupMs);
    }
  }
  const results = new Map<Name, WrkResult[]>(targets.map((target) => [target.name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const target of roundOrder(targets, round)) {
      onRun(`round ${round + 1}/${rounds}: ${target.name}`);
      results.get(target.name)!.push(await wrk(target, run.durationMs / rounds));
    }
  }
  return Object.fromEntries([...results].map(([name, runs]) => [name, combineRounds(runs, run.connections)])) as Record<Name, HttpFigure>;
}

/**
 * The target held near `targetRps` with plain wrk (wrk2 is not packaged): every connection pauses
 * HALF_RATE_DELAY_MS after each answer, so the rate is set by the number of connections. A short
 * calibration run measures what a first guess achieves and scales the connections to hit the target.
 */
export async function measureAtRate(
  run: HttpRun,
  name: string,
  targetRps: number,
): Promise<HttpFigure & { targetRps: number; delayMs: number }> {
  const script = writeWrkScript(`${run.dir}/${name}.lua`, run.requests, HALF_RATE_DELAY_MS);
  const wrk = (connections: number, durationMs: number) => runWrk({ url: run.url, script, connections, durationMs, cpus: run.wrkCpus });
  const guess = connectionsForRate(targetRps, HALF_RATE_DELAY_MS, 0.2);
  const calibrationMs = Math.max(1000, run.warmupMs);
  const calibration = await ticking(wrk(guess, calibrationMs), calibrationMs, run.onTick);
  const connections = Math.min(5000, Math.max(1, Math.round((guess * targetRps) / Math.max(1, calibration.requestsPerSecond))));
  const result = await ticking(wrk(connections, run.durationMs), run.durationMs, run.onTick);
  return { ...figure(result, connections), targetRps, delayMs: HALF_RATE_DELAY_MS };
}
