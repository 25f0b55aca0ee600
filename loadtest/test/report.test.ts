import { describe, expect, it } from 'vitest';
import { evaluateTargets, formatReport, Progress, table, type BenchResult } from '../src/report.js';
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
});

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
    },
    http: {
      redirector: http(80_000, 1),
      customDomain: http(76_000, 1.1),
      limit: http(100_000, 0.8),
      limitWithAddress: http(90_000, 0.85),
      peer: http(20_000, 4),
      halfRate: { ...http(40_000, 0.9), targetRps: 40_000, delayMs: 10 },
    },
    apiReads: {
      me: { path: '/api/auth/me', max: http(12_000, 6), halfRate: { ...http(6_000, 4), targetRps: 6_000, delayMs: 10 } },
      links: { path: '/api/links', max: http(6_000, 12), halfRate: { ...http(3_000, 8), targetRps: 3_000, delayMs: 10 } },
    },
    clickCapture: { buffered: 1_200_000, flushed: 1_200_000, dropped: 0 },
    ratios: { toLimit: 0.8, toPeer: 4 },
    worker: { clicks: 300_000, jobs: 600, seconds: 5, clicksPerSecond: 60_000, rolledUp: 300_000 },
    freshness: { samples: 50, p50Ms: 120, p99Ms: 400, maxMs: 410, timeouts: 0 },
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
    pipeline: {
      heldRps: 31_000,
      stoppedBecause: '38,000 req/s missed: queue lag 9000 ms',
      stepMs: 60_000,
      workerPeakRssMB: 200,
      steps: [
        { ...step(25_000, 24_900), held: true, misses: [] },
        { ...step(31_250, 31_000), held: true, misses: [] },
        { ...step(39_062, 38_000), maxQueueLagMs: 9000, held: false, misses: ['queue lag 9000 ms'] },
      ],
    },
    peakRssMB: { redirector: 90, api: 120, worker: 250 },
    ...overrides,
  };
}

describe('evaluateTargets', () => {
  it('passes every target when the figures meet them', () => {
    const checks = evaluateTargets(result());
    expect(checks).toHaveLength(11);
    expect(checks.filter((c) => !c.pass)).toEqual([]);
  });

  it('misses exactly the targets that are not met, on the boundaries the targets state', () => {
    const checks = evaluateTargets(
      result({
        ratios: { toLimit: 0.69, toPeer: 3 },
        worker: { clicks: 1, jobs: 1, seconds: 1, clicksPerSecond: 49_999, rolledUp: 1 },
        peakRssMB: { redirector: 150.1, worker: 256.1 },
        yearQuery: { requests: 100, buckets: 8761, p50Ms: 40, p99Ms: 100 },
        apiReads: {
          me: { path: '/api/auth/me', max: http(9_999, 6), halfRate: { ...http(5_000, 10.01), targetRps: 5_000, delayMs: 10 } },
          links: { path: '/api/links', max: http(6_000, 12), halfRate: { ...http(3_000, 8), targetRps: 3_000, delayMs: 10 } },
        },
      }),
    );
    const missed = checks.filter((c) => !c.pass).map((c) => c.name);
    expect(missed).toEqual([
      'redirector vs bare uWS (limit)',
      'authenticated API read (GET /api/auth/me), one core',
      'authenticated API read p99 at half its max rate',
      'worker throughput',
      'redirector peak RSS under load',
      'worker peak RSS, pre-filled queue',
    ]);
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
      result({ freshness: { samples: 49, p50Ms: 100, p99Ms: 200, maxMs: 200, timeouts: 1 }, ratios: { toLimit: null, toPeer: null } }),
    );
    expect(checks.filter((c) => !c.pass).map((c) => c.name)).toEqual([
      'redirector vs bare uWS (limit)',
      'redirector vs Fastify peer',
      'freshness p99',
    ]);
  });
});

describe('formatReport', () => {
  it('prints the HTTP table with ratios to the limit and the peer, and every other figure', () => {
    const full = { ...result(), targets: evaluateTargets(result()) };
    const text = formatReport(full);
    expect(text).toMatch(/redirector, clicks on\s+80,000\s+0\.33\s+1\.00\s+80\.0 %\s+4\.00×\s+0/);
    expect(text).toMatch(/bare uWS 302 \(limit\)\s+100,000 .*100\.0 %\s+5\.00×/);
    expect(text).toMatch(/redirector, custom domain \(Host\)\s+76,000 .*76\.0 %\s+3\.80×/);
    expect(text).toMatch(/bare uWS 302 \+ client address\s+90,000 .*90\.0 %\s+4\.50×/);
    expect(text).toMatch(/GET \/api\/auth\/me\s+12,000\s+2\.00\s+6\.00\s+6,000\s+1\.33\s+4\.00\s+0/);
    expect(text).toMatch(/GET \/api\/links\s+6,000\s+4\.00\s+12\.00\s+3,000/);
    expect(text).toContain('60,000 clicks/s');
    expect(text).toContain('1,200,000 of 1,200,000 clicks written to the queue, 0 dropped');
    expect(text).toContain('p99 400 ms');
    expect(text).toContain('17,600 human clicks expected, 17,600 reported');
    expect(text).toContain('8,761 buckets');
    expect(text).toContain('redirector 90.0');
    expect(text).toMatch(/pass\s+click loss\s+exactly 0\s+0/);
    expect(text).toContain('2 × Test CPU');
    expect(text).toContain('31,000 req/s held for 60 s; worker peak RSS 200.0 MB');
    expect(text).toMatch(/38,000 req\/s: .*\(MISS: queue lag 9000 ms\)/);
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

  it('shows each HTTP row beside the bare server of the same run, and the full report', () => {
    const doc = performanceDocument(run('2026-03-01T10:00:00.000Z', 100_000), undefined);
    expect(doc).toContain('## Latest run: 2026-03-01 10:00 to 11:00 UTC');
    expect(doc).toContain('| redirector, clicks on | 80,000 | 0.33 | 1.00 | 100,000 | 80.0 % | 0 |');
    expect(doc).toContain(formatReport(run('2026-03-01T10:00:00.000Z', 100_000)));
    expect(previousHistory(doc)).toEqual([
      '| 2026-03-01 10:00 | 2 × Test CPU | 20.0.0 | 100,000 | 80,000 | 80.0 % | 60,000 | 31,000 | 12,000 | 80.0 |',
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
