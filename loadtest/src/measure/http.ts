import type { HttpFigure } from '../report.js';
import { connectionsForRate } from '../stats.js';
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

/** An unmeasured warm-up run, then the measured run at full speed. */
export async function measureMaxRate(run: HttpRun, name: string): Promise<HttpFigure> {
  const script = writeWrkScript(`${run.dir}/${name}.lua`, run.requests);
  const wrk = (durationMs: number) =>
    runWrk({ url: run.url, script, connections: run.connections, durationMs, cpus: run.wrkCpus });
  if (run.warmupMs > 0) await ticking(wrk(run.warmupMs), run.warmupMs, run.onTick);
  return figure(await ticking(wrk(run.durationMs), run.durationMs, run.onTick), run.connections);
}

/**
 * The target held near `targetRps` with plain wrk (wrk2 is not packaged): every connection pauses
 * HALF_RATE_DELAY_MS after each answer, so the rate is set by the number of connections. A short
 * calibration run measures what a first guess achieves and scales the connections to hit the target.
 */
export async function measureAtRate(run: HttpRun, name: string, targetRps: number): Promise<HttpFigure & { targetRps: number; delayMs: number }> {
  const script = writeWrkScript(`${run.dir}/${name}.lua`, run.requests, HALF_RATE_DELAY_MS);
  const wrk = (connections: number, durationMs: number) =>
    runWrk({ url: run.url, script, connections, durationMs, cpus: run.wrkCpus });
  const guess = connectionsForRate(targetRps, HALF_RATE_DELAY_MS, 0.2);
  const calibrationMs = Math.max(1000, run.warmupMs);
  const calibration = await ticking(wrk(guess, calibrationMs), calibrationMs, run.onTick);
  const connections = Math.min(5000, Math.max(1, Math.round((guess * targetRps) / Math.max(1, calibration.requestsPerSecond))));
  const result = await ticking(wrk(connections, run.durationMs), run.durationMs, run.onTick);
  return { ...figure(result, connections), targetRps, delayMs: HALF_RATE_DELAY_MS };
}
