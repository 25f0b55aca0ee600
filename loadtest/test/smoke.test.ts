import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runToExit, type RunningProcess } from '@deeplink/test-kit/processes';
import type { BenchResult } from '../src/report.js';

const repoRoot = join(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
let bench: RunningProcess | undefined;
afterAll(async () => {
  // On a timeout the bench is still running: SIGTERM makes it stop its services and clean up.
  await bench?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the real bench, briefly: every phase, a second or a few hundred requests each. */
function runBench(output: string): Promise<{ code: number | null; output: string }> {
  return runToExit(
    { entry: join(repoRoot, 'loadtest/src/bench.ts') },
    {
      // The developer's environment, as `npm run bench` from their shell has it (DATABASE_URL, say);
      // the bench passes its services only what they need.
      env: {
        ...process.env,
        BENCH_DURATION: '1s',
        BENCH_WARMUP: '0s',
        BENCH_CONNECTIONS: '8',
        BENCH_LINKS: '40',
        BENCH_WORKER_CLICKS: '5000',
        BENCH_LOSS_REQUESTS: '600',
        BENCH_FRESHNESS_SAMPLES: '5',
        BENCH_QUERY_REQUESTS: '5',
        BENCH_YEAR_CLICKS_PER_HOUR: '2',
        BENCH_PIPELINE_STEP: '2s',
        BENCH_PIPELINE_START_RATE: '200',
        BENCH_PIPELINE_STEPS: '2',
        BENCH_HOT_LINK_DURATION: '2s',
        BENCH_OUTPUT: output,
      },
      onSpawn: (started) => (bench = started),
      timeoutMs: 300_000,
    },
  );
}

describe('npm run bench (smoke run)', () => {
  it('produces every figure, and loses no click', { timeout: 320_000 }, async () => {
    const output = join(dir, 'result.json');
    const { code, output: log } = await runBench(output);
    expect(code, log).toBe(0);
    const result = JSON.parse(readFileSync(output, 'utf8')) as BenchResult;

    for (const figure of Object.values(result.http)) {
      expect(figure.requestsPerSecond).toBeGreaterThan(0);
      expect(figure.p50Ms).toBeGreaterThan(0);
      expect(figure.p99Ms).toBeGreaterThanOrEqual(figure.p50Ms);
      expect(figure.errors).toBe(0);
    }
    // Authenticated API reads and App SDK calls: every answer a 200 (wrk counts any other status as an error).
    for (const { max, halfRate } of [...Object.values(result.apiReads), ...Object.values(result.appSdk)]) {
      for (const figure of [max, halfRate]) {
        expect(figure.requestsPerSecond).toBeGreaterThan(0);
        expect(figure.requests).toBeGreaterThan(0);
        expect(figure.errors).toBe(0);
      }
    }
    expect(result.ratios.toLimit).toBeGreaterThan(0);
    expect(result.clickCapture.dropped).toBe(0);
    expect(result.clickCapture.flushed).toBe(result.clickCapture.buffered);
    expect(result.clickCapture.buffered).toBeGreaterThan(0);
    expect(result.ratios.toPeer).toBeGreaterThan(0);

    expect(result.worker.clicksPerSecond).toBeGreaterThan(0);
    expect(result.worker.rolledUp).toBe(5000);

    expect(result.freshness).toMatchObject({ samples: 5, timeouts: 0 });
    expect(result.freshness.p99Ms).toBeGreaterThan(0);
    expect(result.liveFreshness).toMatchObject({ samples: 5, timeouts: 0 });
    expect(result.liveFreshness.p99Ms).toBeGreaterThan(0);

    expect(result.loss.requests).toBe(600);
    expect(result.loss.botAnswered).toBeGreaterThan(0);
    expect(result.loss.expected).toBe(result.loss.requests - result.loss.botRequests);
    expect(result.loss).toMatchObject({ loss: 0, failedJobs: 0, droppedByRedirector: 0 });

    expect(result.yearQuery.requests).toBe(5);
    expect(result.yearQuery.buckets).toBeGreaterThanOrEqual(365 * 24);
    expect(result.yearQuery.p99Ms).toBeGreaterThan(0);
    // The same year under two filters: a share of its clicks, every hour still a bucket.
    expect(result.yearQueryFiltered).toMatchObject({ requests: 5, buckets: result.yearQuery.buckets, filters: 'platform=iOS&country=US' });
    expect(result.yearQueryFiltered.totalClicks).toBeGreaterThan(0);
    expect(result.yearQueryFiltered.totalClicks).toBeLessThan(result.yearQueryFiltered.yearClicks);
    expect(result.yearQueryFiltered.p99Ms).toBeGreaterThan(0);

    // The pipeline row at a tiny rate: every step holds, and every redirect is in the rollups.
    expect(result.pipeline.steps.length).toBeGreaterThanOrEqual(1);
    for (const step of result.pipeline.steps) {
      expect(step, JSON.stringify(step)).toMatchObject({ held: true, loss: 0, errors: 0, misses: [] });
      expect(step.answered).toBeGreaterThan(0);
      expect(step.freshness.samples).toBeGreaterThan(0);
    }
    expect(result.pipeline.heldRps).toBe(Math.max(...result.pipeline.steps.map((step) => step.requestsPerSecond)));
    expect(result.pipeline.stoppedBecause).not.toMatch(/missed/);
    expect(result.pipeline.workerPeakRssMB).toBeGreaterThan(10);
    // Each step charged CPU time to the stack's parts, Redis counted its commands.
    for (const step of result.pipeline.steps) {
      expect(step.cpu?.clicks).toBe(step.answered);
      expect(step.cpu?.rows.map((row) => row.name)).toEqual([
        'redirector',
        'worker',
        'Redis',
        'PostgreSQL',
        'everything else (wrk, the kernel, the bench)',
      ]);
      expect(step.cpu!.rows.find((row) => row.name === 'redirector')!.cpuSeconds).toBeGreaterThan(0);
      expect(step.cpu!.redisCommands.length).toBeGreaterThan(0);
      expect(step.ratesByMinute).toHaveLength(1);
    }

    // One hot link, at the rate the capacity row held: one step, every click counted.
    expect(result.hotLink.stepMs).toBe(2000);
    expect(result.hotLink.step, JSON.stringify(result.hotLink.step)).toMatchObject({ held: true, loss: 0, errors: 0 });
    expect(result.hotLink.step!.answered).toBeGreaterThan(0);
    expect(result.hotLink.step!.targetRps).toBe(result.pipeline.heldRps);

    // The insert-per-click peer inserted a row for every answer (and its warm-up's).
    expect(result.insertPeer.errors).toBe(0);
    expect(result.insertPeer.requests).toBeGreaterThan(0);
    expect(result.insertPeer.rows).toBeGreaterThanOrEqual(result.insertPeer.requests);
    expect(result.ratios.pipelineToInsertPeer).toBeGreaterThan(0);

    for (const name of [
      'api',
      'api-pinned',
      'redirector',
      'redirector-pipeline',
      'worker',
      'worker-pipeline',
      'redirector-capacity',
      'worker-capacity',
      'bare-uws',
      'bare-uws-address',
      'fastify-peer',
      'insert-peer',
    ]) {
      expect(result.peakRssMB[name], name).toBeGreaterThan(10);
    }
    expect(result.targets).toHaveLength(16);
    expect(log).toContain('targets');
  });
});
