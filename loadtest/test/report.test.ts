import { describe, expect, it } from 'vitest';
import { evaluateTargets, formatRedirectorReport, formatReport, Progress, table, type BenchResult } from '../src/report.js';
import { HISTORY_ROWS, performanceDocument, previousHistory } from '../src/performance-doc.js';

const http = (requestsPerSecond: number, p99Ms: number) => ({
  requestsPerSecond,
  p50Ms: p99Ms / 3,
  p99Ms,
  requests: requestsPerSecond * 10,
  errors: 0,
  connections: 32,
});

const step = (targetRps: number, requestsPerSecond: number) => ({
  targetRps,
  requestsPerSecond,
  requests: requestsPerSecond * 60,
  errors: 0,
  connections: 300,
  maxQueueLagMs: 40,
  freshness: { samples: 200, p50Ms: 60, p99Ms: 300, timeouts: 0 },
  answered: requestsPerSecond * 60,
  loss: 0,
  ratesByMinute: [requestsPerSecond],
});

/** What a step at 36,000 req/s for 60 s might have cost: 2,160,000 clicks. */
const cpu = {
  clicks: 2_160_000,
  seconds: 64,
  rows: [
    { name: 'redirector', cpuSeconds: 54, microsPerClick: 25, share: 0.42 },
    { name: 'worker', cpuSeconds: 21.6, microsPerClick: 10, share: 0.17 },
    { name: 'Redis', cpuSeconds: 17.28, microsPerClick: 8, share: 0.135 },
    { name: 'PostgreSQL', cpuSeconds: 4.32, microsPerClick: 2, share: 0.034 },
    { name: 'everything else (wrk, the kernel, the bench)', cpuSeconds: 30.8, microsPerClick: 14.26, share: 0.24 },
  ],
  redisCommands: [
    { command: 'evalsha', callsPerClick: 0.004, microsPerClick: 5.5 },
    { command: 'hget', callsPerClick: 0.01, microsPerClick: 0.2 },
  ],
};

function result(overrides: Partial<Omit<BenchResult, 'targets'>> = {}): Omit<BenchResult, 'targets'> {
  return {
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:05:00.000Z',
    machine: { nproc: 2, cpuModel: 'Test CPU', memoryGiB: 24, node: '20.0.0', wrk: 'wrk 4.1.0' },
    settings: {
      durationMs: 10_000,
      rounds: 5,
      warmupMs: 2000,
      connections: 32,
      links: 1000,
      workerClicks: 300_000,
      installPercent: 20,
      lossRequests: 20_000,
      freshnessSamples: 50,
      yearClicksPerHour: 40,
      queryRequests: 100,
      serverCpus: '0',
      wrkCpus: '1',
      keep: false,
      profile: [],
      pipelineStepMs: 60_000,
      pipelineStartRps: 25_000,
      pipelineFactor: 1.25,
      pipelineSteps: 6,
      hotLinkMs: 300_000,
    },
    http: {
      redirector: http(80_000, 1),
      customDomain: http(76_000, 1.1),
      androidStore: http(72_000, 1.1),
      androidPlain: http(75_000, 1),
      limit: http(100_000, 0.8),
      limitWithAddress: http(90_000, 0.85),
      peer: http(20_000, 4),
      halfRate: { ...http(40_000, 0.9), targetRps: 40_000, delayMs: 10 },
    },
    apiReads: {
      me: { path: '/api/auth/me', max: http(12_000, 6), halfRate: { ...http(6_000, 4), targetRps: 6_000, delayMs: 10 } },
      links: { path: '/api/links', max: http(6_000, 12), halfRate: { ...http(3_000, 8), targetRps: 3_000, delayMs: 10 } },
    },
    appSdk: {
      open: { path: '/api/app/open', max: http(7_000, 9), halfRate: { ...http(3_500, 5), targetRps: 3_500, delayMs: 10 } },
      install: { path: '/api/app/install', max: http(4_000, 12), halfRate: { ...http(2_000, 6), targetRps: 2_000, delayMs: 10 } },
    },
    clickCapture: { buffered: 1_200_000, flushed: 1_200_000, dropped: 0 },
    ratios: { toLimit: 0.8, toPeer: 4, pipelineToInsertPeer: 24 },
    worker: { clicks: 300_000, jobs: 600, seconds: 5, clicksPerSecond: 60_000, rolledUp: 300_000 },
    freshness: { samples: 50, p50Ms: 120, p99Ms: 400, maxMs: 410, timeouts: 0 },
    liveFreshness: { samples: 50, p50Ms: 110, p99Ms: 380, maxMs: 390, timeouts: 0 },
    loss: {
      requests: 20_000,
      botRequests: 2400,
      humanAnswered: 17_600,
      botAnswered: 2400,
      statuses: { 302: 20_000 },
      expected: 17_600,
      reported: 17_600,
      loss: 0,
      failedJobs: 0,
      droppedByRedirector: 0,
    },
    yearQuery: { requests: 100, buckets: 8761, p50Ms: 40, p99Ms: 80 },
    yearQueryFiltered: {
      filters: 'platform=iOS&country=US',
      requests: 100,
      buckets: 8761,
      totalClicks: 35_000,
      yearClicks: 350_440,
      p50Ms: 45,
      p99Ms: 90,
    },
    pipeline: {
      heldRps: 36_000,
      stoppedBecause: '44,000 req/s missed: queue lag 9000 ms',
      stepMs: 60_000,
      workerPeakRssMB: 200,
      steps: [
        { ...step(29_000, 28_900), held: true, misses: [] },
        { ...step(36_250, 36_000), held: true, misses: [], cpu },
        { ...step(45_312, 44_000), maxQueueLagMs: 9000, held: false, misses: ['queue lag 9000 ms'] },
      ],
    },
    hotLink: {
      stepMs: 300_000,
      step: { ...step(36_000, 35_000), ratesByMinute: [35_500, 35_000, 34_800, 34_900, 34_800], held: true, misses: [] },
    },
    insertPeer: { ...http(1_500, 40), rows: 60_000 },
    peakRssMB: { redirector: 90, api: 120, worker: 250 },
    ...overrides,
  };
}

describe('evaluateTargets', () => {
  it('passes every target when the figures meet them', () => {
    const checks = evaluateTargets(result());
    expect(checks).toHaveLength(16);
    expect(checks.filter((c) => !c.pass)).toEqual([]);
  });

  it('misses exactly the targets that are not met, on the boundaries the targets state', () => {
    const checks = evaluateTargets(
      result({
        ratios: { toLimit: 0.69, toPeer: 3, pipelineToInsertPeer: 19.9 },
        http: { ...result().http, androidStore: http(67_499, 1.1), androidPlain: http(75_000, 1) },
        worker: { clicks: 1, jobs: 1, seconds: 1, clicksPerSecond: 49_999, rolledUp: 1 },
        peakRssMB: { redirector: 150.1, worker: 256.1 },
        yearQuery: { requests: 100, buckets: 8761, p50Ms: 40, p99Ms: 100 },
        yearQueryFiltered: { ...result().yearQueryFiltered, p99Ms: 100.1 },
        apiReads: {
          me: { path: '/api/auth/me', max: http(9_999, 6), halfRate: { ...http(5_000, 10.01), targetRps: 5_000, delayMs: 10 } },
          links: { path: '/api/links', max: http(6_000, 12), halfRate: { ...http(3_000, 8), targetRps: 3_000, delayMs: 10 } },
        },
      }),
    );
    const missed = checks.filter((c) => !c.pass).map((c) => c.name);
    expect(missed).toEqual([
      'redirector vs bare uWS (limit)',
      'Android redirect minting a token vs a plain one',
      'authenticated API read (GET /api/auth/me), one core',
      'authenticated API read p99 at half its max rate',
      'worker throughput',
      'redirector peak RSS under load',
      'worker peak RSS, pre-filled queue',
      'one-year hourly query p99, two filters',
      'pipeline vs insert-per-click peer',
    ]);
  });

  it('misses the pipeline rows below 35,000 req/s, and a hot link that did not hold or fell 10 % behind', () => {
    const base = result();
    const missed = (overrides: Partial<Omit<BenchResult, 'targets'>>) =>
      evaluateTargets({ ...base, ...overrides })
        .filter((c) => !c.pass)
        .map((c) => c.name);
    expect(missed({ pipeline: { ...base.pipeline, heldRps: 34_999 } })).toEqual(['pipeline capacity (loss 0, freshness p99 ≤ 1 s)']);
    const live = base.liveFreshness;
    expect(missed({ liveFreshness: { ...live, p99Ms: 1000 } })).toEqual([]);
    expect(missed({ liveFreshness: { ...live, p99Ms: 1001 } })).toEqual(['live stream freshness p99 (302 → SSE message)']);
    expect(missed({ liveFreshness: { ...live, timeouts: 1 } })).toEqual(['live stream freshness p99 (302 → SSE message)']);
    const hot = base.hotLink.step!;
    expect(missed({ hotLink: { stepMs: 300_000, step: { ...hot, requestsPerSecond: 32_400 } } })).toEqual([]);
    expect(missed({ hotLink: { stepMs: 300_000, step: { ...hot, requestsPerSecond: 32_399 } } })).toEqual([
      'one hot link for 300 s vs the capacity row',
    ]);
    expect(missed({ hotLink: { stepMs: 300_000, step: { ...hot, held: false, misses: ['loss 1'] } } })).toEqual([
      'one hot link for 300 s vs the capacity row',
    ]);
    expect(missed({ hotLink: { stepMs: 300_000, step: null } })).toEqual(['one hot link for 300 s vs the capacity row']);
  });

  it('misses loss on any difference, in either direction, and when nothing was counted at all', () => {
    const base = result();
    const lossCheck = (loss: number, expected = 10) =>
      evaluateTargets({ ...base, loss: { ...base.loss, loss, expected } }).find((c) => c.name === 'click loss')!.pass;
    expect(lossCheck(0)).toBe(true);
    expect(lossCheck(1)).toBe(false);
    expect(lossCheck(-1)).toBe(false);
    expect(lossCheck(0, 0)).toBe(false);
  });

  it('misses freshness when a sample timed out, and ratios that could not be computed', () => {
    const checks = evaluateTargets(
      result({
        freshness: { samples: 49, p50Ms: 100, p99Ms: 200, maxMs: 200, timeouts: 1 },
        ratios: { toLimit: null, toPeer: null, pipelineToInsertPeer: 24 },
      }),
    );
    expect(checks.filter((c) => !c.pass).map((c) => c.name)).toEqual([
      'redirector vs bare uWS (limit)',
      'redirector vs Fastify peer',
      'freshness p99',
    ]);
  });
});

describe('formatRedirectorReport', () => {
  it("prints the redirector's full-speed rows beside the limit and the peer, and the token row against the plain one", () => {
    const { halfRate: _, ...rows } = result().http;
    const text = formatRedirectorReport(result().settings, rows);
    expect(text).toMatch(/^HTTP: wrk, 1 thread, 32 connections/);
    expect(text).toMatch(/bare uWS 302 \(limit\)\s+100,000 .*100\.0 %/);
    expect(text).toMatch(/redirector, clicks on\s+80,000 .*80\.0 %\s+4\.00×\s+0/);
    expect(text).toMatch(/redirector, Android, Play \+ token\s+72,000 .*72\.0 %\s+3\.60×/);
    expect(text).toMatch(/Fastify \+ Redis GET \(peer\)\s+20,000 .*1\.00×/);
    expect(text).toContain('Android, Play + token vs plain intent: 96.0 % (target ≥ 90 %)');
    expect(text).not.toContain('worker');
  });
});

describe('formatReport', () => {
  it('prints the HTTP table with ratios to the limit and the peer, and every other figure', () => {
    const full = { ...result(), targets: evaluateTargets(result()) };
    const text = formatReport(full);
    expect(text).toMatch(/redirector, clicks on\s+80,000\s+0\.33\s+1\.00\s+80\.0 %\s+4\.00×\s+0/);
    expect(text).toMatch(/bare uWS 302 \(limit\)\s+100,000 .*100\.0 %\s+5\.00×/);
    expect(text).toMatch(/redirector, custom domain \(Host\)\s+76,000 .*76\.0 %\s+3\.80×/);
    expect(text).toMatch(/redirector, Android, plain intent\s+75,000 .*75\.0 %\s+3\.75×/);
    expect(text).toMatch(/redirector, Android, Play \+ token\s+72,000 .*72\.0 %\s+3\.60×/);
    expect(text).toMatch(/pass\s+Android redirect minting a token vs a plain one\s+≥ 90 %\s+96\.0 %/);
    expect(text).toMatch(/bare uWS 302 \+ client address\s+90,000 .*90\.0 %\s+4\.50×/);
    expect(text).toMatch(/GET \/api\/auth\/me\s+12,000\s+2\.00\s+6\.00\s+6,000\s+1\.33\s+4\.00\s+0/);
    expect(text).toMatch(/GET \/api\/links\s+6,000\s+4\.00\s+12\.00\s+3,000/);
    expect(text).toMatch(/POST \/api\/app\/open\s+7,000\s+3\.00\s+9\.00\s+3,500/);
    expect(text).toMatch(/POST \/api\/app\/install\s+4,000\s+4\.00\s+12\.00\s+2,000/);
    expect(text).toMatch(/POST \/api\/app\/open\s+7,000\s+3\.00\s+9\.00\s+3,500/);
    expect(text).toMatch(/POST \/api\/app\/install\s+4,000\s+4\.00\s+12\.00\s+2,000/);
    expect(text).toContain('60,000 clicks/s');
    expect(text).toContain('1,200,000 of 1,200,000 clicks written to the queue, 0 dropped');
    expect(text).toContain('p99 400 ms');
    expect(text).toContain('17,600 human clicks expected, 17,600 reported');
    expect(text).toContain('8,761 buckets');
    expect(text).toContain('redirector 90.0');
    expect(text).toMatch(/pass\s+click loss\s+exactly 0\s+0/);
    expect(text).toContain('2 × Test CPU');
    expect(text).toContain('36,000 req/s held for 60 s; worker peak RSS 200.0 MB');
    expect(text).toMatch(/44,000 req\/s: .*\(MISS: queue lag 9000 ms\)/);
    expect(text).toContain(
      '35,000 req/s for 300 s, held; freshness p99 300 ms, loss 0; by minute: 35,500, 35,000, 34,800, 34,900, 34,800 req/s',
    );
    expect(text).toContain('1,500 req/s, p99 40.00 ms, 0 errors (60,000 rows inserted); the pipeline row is 24.00× that');
  });

  it("shows where a click's CPU time went in the fastest step that held", () => {
    // A slower step held after it (the stepping stopped growing): its cost is not the one shown.
    const base = result();
    const slower = { ...base.pipeline.steps[1]!, requestsPerSecond: 35_000, cpu: { ...cpu, clicks: 1 } };
    const withSlower = { ...base, pipeline: { ...base.pipeline, steps: [...base.pipeline.steps.slice(0, 2), slower] } };
    expect(formatReport({ ...withSlower, targets: evaluateTargets(withSlower) })).toContain('CPU per click at 36,000 req/s');
    const text = formatReport({ ...result(), targets: evaluateTargets(result()) });
    expect(text).toContain('CPU per click at 36,000 req/s (2,160,000 clicks, 64.0 s');
    expect(text).toMatch(/redirector\s+54\.0\s+25\.0\s+42\.0 %/);
    expect(text).toMatch(/total\s+128\.0\s+59\.3/);
    expect(text).toMatch(/evalsha\s+0\.004\s+5\.50/);
  });

  it('aligns columns', () => {
    expect(
      table([
        ['a', '1'],
        ['long', '100'],
      ]),
    ).toBe('a       1\nlong  100');
    expect(
      table(
        [
          ['a', 'x', '1'],
          ['bb', 'yy', '22'],
        ],
        2,
      ),
    ).toBe('a   x    1\nbb  yy  22');
  });
});

describe('Progress', () => {
  const sink = (isTTY: boolean) => {
    const writes: string[] = [];
    return { writes, out: { isTTY, write: (text: string) => writes.push(text) } };
  };

  it('rewrites one line in place on a terminal', () => {
    const { writes, out } = sink(true);
    const progress = new Progress(out, 5000, () => 0);
    progress.phase('[1/2] seeding');
    progress.update('10 links');
    progress.end();
    expect(writes).toEqual(['\r\x1b[2K[bench +0s] [1/2] seeding', '\r\x1b[2K[bench +0s] [1/2] seeding: 10 links', '\n']);
  });

  it('prints plain lines elsewhere, at most one update per interval', () => {
    const { writes, out } = sink(false);
    let now = 0;
    const progress = new Progress(out, 5000, () => now);
    progress.phase('[1/2] seeding');
    progress.update('too soon');
    now = 6000;
    progress.update('10 links');
    progress.end();
    expect(writes).toEqual(['[bench +0s] [1/2] seeding\n', '[bench +6s] [1/2] seeding: 10 links\n']);
  });
});

describe('performanceDocument', () => {
  const run = (startedAt: string, limit: number) => {
    const base = result({
      startedAt,
      finishedAt: startedAt.replace(/T(\d\d)/, (_, hour: string) => `T${String(Number(hour) + 1).padStart(2, '0')}`),
    });
    const full = { ...base, http: { ...base.http, limit: http(limit, 0.8) } };
    return { ...full, targets: evaluateTargets(full) };
  };

  it('shows each HTTP row beside the bare server of the same run, the pipeline rows, the CPU per click, and the full report', () => {
    const doc = performanceDocument(run('2026-03-01T10:00:00.000Z', 100_000), undefined);
    expect(doc).toContain('| capacity: 1,000 links, 60 s per rate | 36,000 | 300 | 1.00× |');
    expect(doc).toContain('| one hot link for 300 s; by minute 35,500, 35,000, 34,800, 34,900, 34,800 | 35,000 | 300 | 1.03× |');
    expect(doc).toContain('| insert-per-click peer (Fastify, Redis GET, PostgreSQL INSERT) | 1,500 | | 24.00× |');
    expect(doc).toContain('| redirector | 25.0 | 42.0 % |');
    expect(doc).toContain('| all | 59.3 | |');
    expect(doc).toContain('| evalsha | 0.004 | 5.50 |');
    expect(doc).toContain('## Latest run: 2026-03-01 10:00 to 11:00 UTC');
    expect(doc).toContain('| redirector, clicks on | 80,000 | 0.33 | 1.00 | 100,000 | 80.0 % | 0 |');
    expect(doc).toContain(formatReport(run('2026-03-01T10:00:00.000Z', 100_000)));
    expect(previousHistory(doc)).toEqual([
      '| 2026-03-01 10:00 | 2 × Test CPU | 20.0.0 | 100,000 | 80,000 | 80.0 % | 60,000 | 36,000 | 12,000 | 80.0 |',
    ]);
  });

  it('carries the history over, newest first, and keeps the last runs only', () => {
    let doc: string | undefined;
    for (let day = 1; day <= HISTORY_ROWS + 5; day++)
      doc = performanceDocument(run(new Date(Date.UTC(2026, 2, day, 10)).toISOString(), 100_000 + day), doc);
    const rows = previousHistory(doc);
    expect(rows).toHaveLength(HISTORY_ROWS);
    expect(rows[0]).toMatch(/^\| 2026-04-04 10:00 \| .* \| 100,035 \|/);
    expect(rows.at(-1)).toMatch(/^\| 2026-03-06 10:00 \|/);
  });

  it('starts a new history from a file it did not write', () => {
    expect(previousHistory('# Performance\n\n| 2026-01-01 | hand-written |\n')).toEqual([]);
  });
});
