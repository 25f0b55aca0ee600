import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ApiRead, ApiReadFigure } from './measure/api-reads.js';
import type { AppSdkCall, AppSdkFigure } from './measure/app-sdk.js';
import type { ClickCapture } from './measure/drain.js';
import type { LossAccount, LossTally } from './measure/loss.js';
import type { CpuCost } from './measure/cpu-cost.js';
import type { PipelineFigure, PipelineStep } from './measure/pipeline.js';
import type { BenchSettings } from './settings.js';
import { roundsFor } from './measure/http.js';

/** One HTTP target under wrk. */
export interface HttpFigure {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  errors: number;
  connections: number;
}

/** Everything one bench run measured; written as JSON and printed as a table. */
export interface BenchResult {
  startedAt: string;
  finishedAt: string;
  machine: { nproc: number; cpuModel: string; memoryGiB: number; node: string; wrk: string };
  settings: Omit<BenchSettings, 'output'>;
  http: {
    redirector: HttpFigure;
    /** The same redirector, its links on a custom domain named by each request's Host header. */
    customDomain: HttpFigure;
    /** The same redirector, Android visits only, each sent to an intent falling back to the Play Store: a fresh install token per visit. */
    androidStore: HttpFigure;
    /** The same links and visitors, the intent falling back to a web page: no token. */
    androidPlain: HttpFigure;
    limit: HttpFigure;
    /** The bare server also reading each visitor's address, which the redirector must do. */
    limitWithAddress: HttpFigure;
    peer: HttpFigure;
    /** The redirector held near half of its measured maximum (wrk's fixed-delay mode). */
    halfRate: HttpFigure & { targetRps: number; delayMs: number };
  };
  /** Authenticated API reads (login token), the API pinned to one core. */
  apiReads: Record<ApiRead, ApiReadFigure>;
  /** App SDK calls with a publishable app key, the same pinned API. */
  appSdk: Record<AppSdkCall, AppSdkFigure>;
  /** The redirector's click counters after its two wrk runs. */
  clickCapture: ClickCapture;
  ratios: { toLimit: number | null; toPeer: number | null; pipelineToInsertPeer: number | null };
  worker: { clicks: number; jobs: number; seconds: number; clicksPerSecond: number; rolledUp: number };
  /** The same row with a share of Android store visits carrying install tokens (absent with BENCH_INSTALL_PERCENT=0). */
  workerInstalls?: { clicks: number; installPercent: number; seconds: number; clicksPerSecond: number; installRows: number };
  freshness: { samples: number; p50Ms: number; p99Ms: number; maxMs: number; timeouts: number };
  /** From the redirect's answer to the message on the link's live stream (the same samples). */
  liveFreshness: { samples: number; p50Ms: number; p99Ms: number; maxMs: number; timeouts: number };
  loss: LossTally & LossAccount & { failedJobs: number; droppedByRedirector: number | null };
  yearQuery: { requests: number; buckets: number; p50Ms: number; p99Ms: number };
  /**
   * The same report under two filters (`filters`, a query string), read from the combination
   * rollups: `totalClicks` of the `yearClicks` matched them.
   */
  yearQueryFiltered: {
    filters: string;
    requests: number;
    buckets: number;
    totalClicks: number;
    yearClicks: number;
    p50Ms: number;
    p99Ms: number;
  };
  /** The highest rate the whole stack held (redirector, worker, Redis, PostgreSQL and wrk on this machine). */
  pipeline: PipelineFigure;
  /** The whole stack held at the pipeline row's rate with every visit on one link. */
  hotLink: { stepMs: number; step: PipelineStep | null };
  /** Fastify, a Redis GET and one PostgreSQL INSERT per click, unpinned like the pipeline row; `rows` it inserted in all. */
  insertPeer: HttpFigure & { rows: number };
  /** Peak resident set size (VmHWM) of each process, in MB (10^6 bytes). */
  peakRssMB: Record<string, number>;
  targets: TargetCheck[];
}

/** One of the project's performance targets, reported (never asserted) as pass or miss. */
export interface TargetCheck {
  name: string;
  target: string;
  value: string;
  pass: boolean;
}

const fmt = (value: number, digits = 0) =>
  Number.isFinite(value) ? value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : 'n/a';
const pct = (value: number | null) => (value === null ? 'n/a' : `${fmt(value * 100, 1)} %`);
const times = (value: number | null) => (value === null ? 'n/a' : `${fmt(value, 2)}×`);

/** Checks the measured figures against the targets in docs/loadtest.md. */
export function evaluateTargets(r: Omit<BenchResult, 'targets'>): TargetCheck[] {
  const check = (name: string, target: string, value: string, pass: boolean): TargetCheck => ({ name, target, value, pass });
  const redirectorRss = r.peakRssMB.redirector ?? NaN;
  const workerRss = r.peakRssMB.worker ?? NaN;
  return [
    check('redirector vs bare uWS (limit)', '≥ 70 %', pct(r.ratios.toLimit), (r.ratios.toLimit ?? 0) >= 0.7),
    check('redirector vs Fastify peer', '≥ 3×', times(r.ratios.toPeer), (r.ratios.toPeer ?? 0) >= 3),
    check(
      'Android redirect minting a token vs a plain one',
      '≥ 90 %',
      pct(ratio(r.http.androidStore.requestsPerSecond, r.http.androidPlain.requestsPerSecond)),
      r.http.androidStore.requestsPerSecond >= 0.9 * r.http.androidPlain.requestsPerSecond,
    ),
    check('redirect p99 at half the max rate', '≤ 5 ms', `${fmt(r.http.halfRate.p99Ms, 2)} ms`, r.http.halfRate.p99Ms <= 5),
    check(
      'authenticated API read (GET /api/auth/me), one core',
      '≥ 10,000 req/s',
      `${fmt(r.apiReads.me.max.requestsPerSecond)} req/s`,
      r.apiReads.me.max.requestsPerSecond >= 10_000,
    ),
    check(
      'authenticated API read p99 at half its max rate',
      '≤ 10 ms',
      `${fmt(r.apiReads.me.halfRate.p99Ms, 2)} ms`,
      r.apiReads.me.halfRate.p99Ms <= 10,
    ),
    check('worker throughput', '≥ 50,000 clicks/s', `${fmt(r.worker.clicksPerSecond)} clicks/s`, r.worker.clicksPerSecond >= 50_000),
    check('freshness p99', '≤ 2 s', `${fmt(r.freshness.p99Ms)} ms`, r.freshness.timeouts === 0 && r.freshness.p99Ms <= 2000),
    check(
      'live stream freshness p99 (302 → SSE message)',
      '≤ 1 s',
      `${fmt(r.liveFreshness.p99Ms)} ms`,
      r.liveFreshness.timeouts === 0 && r.liveFreshness.samples > 0 && r.liveFreshness.p99Ms <= 1000,
    ),
    check('click loss', 'exactly 0', fmt(r.loss.loss), r.loss.loss === 0 && r.loss.expected > 0),
    check('redirector peak RSS under load', '≤ 150 MB', `${fmt(redirectorRss, 1)} MB`, redirectorRss <= 150),
    check('worker peak RSS, pre-filled queue', '≤ 256 MB', `${fmt(workerRss, 1)} MB`, workerRss <= 256),
    check('one-year hourly query p99', '≤ 100 ms', `${fmt(r.yearQuery.p99Ms, 1)} ms`, r.yearQuery.p99Ms <= 100),
    check(
      'one-year hourly query p99, two filters',
      '≤ 100 ms',
      `${fmt(r.yearQueryFiltered.p99Ms, 1)} ms`,
      r.yearQueryFiltered.p99Ms <= 100,
    ),
    check(
      'pipeline capacity (loss 0, freshness p99 ≤ 1 s)',
      '≥ 35,000 req/s',
      `${fmt(r.pipeline.heldRps ?? 0)} req/s`,
      (r.pipeline.heldRps ?? 0) >= 35_000,
    ),
    check(`one hot link for ${fmt(r.hotLink.stepMs / 1000)} s vs the capacity row`, 'held, within 10 %', hotLinkValue(r), hotLinkHeld(r)),
    check('pipeline vs insert-per-click peer', '≥ 20×', times(r.ratios.pipelineToInsertPeer), (r.ratios.pipelineToInsertPeer ?? 0) >= 20),
  ];
}

/** Whether the hot-link step held and delivered at least 90 % of the capacity row's rate. */
function hotLinkHeld(r: Pick<BenchResult, 'hotLink' | 'pipeline'>): boolean {
  const { step } = r.hotLink;
  return !!step && step.held && r.pipeline.heldRps !== null && step.requestsPerSecond >= 0.9 * r.pipeline.heldRps;
}

function hotLinkValue(r: Pick<BenchResult, 'hotLink' | 'pipeline'>): string {
  const { step } = r.hotLink;
  if (!step) return 'not run';
  const share = r.pipeline.heldRps ? ` (${pct(step.requestsPerSecond / r.pipeline.heldRps)})` : '';
  return `${fmt(step.requestsPerSecond)} req/s${share}${step.held ? '' : ', not held'}`;
}

/** Lays out rows in columns: the first `leftColumns` left-aligned (text), the rest right-aligned (numbers). */
export function table(rows: string[][], leftColumns = 1): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  const cell = (text: string, column: number) => (column < leftColumns ? text.padEnd(widths[column]!) : text.padStart(widths[column]!));
  return rows.map((row) => row.map(cell).join('  ').trimEnd()).join('\n');
}

const ratio = (part: number, whole: number) => (whole > 0 ? part / whole : null);

/** The full-speed table's heading line: how wrk loaded the targets. */
function httpHeading(s: BenchResult['settings']): string {
  const pinning = s.serverCpus ? `server on CPU ${s.serverCpus}, wrk on CPU ${s.wrkCpus}` : 'no CPU pinning';
  return `HTTP: wrk, 1 thread, ${s.connections} connections, ${s.durationMs / 1000} s per target in ${roundsFor(s.durationMs, s.rounds)} interleaved rounds, ${pinning}`;
}

/** The full-speed rows of the redirector's own targets, against the limit and the peer of the same run. */
function redirectorRows(
  http: Pick<BenchResult['http'], 'redirector' | 'customDomain' | 'androidStore' | 'androidPlain' | 'limit' | 'peer'>,
) {
  const limitRatio = (f: HttpFigure) => pct(f.requestsPerSecond / http.limit.requestsPerSecond);
  const peerRatio = (f: HttpFigure) => times(f.requestsPerSecond / http.peer.requestsPerSecond);
  const row = (name: string, f: HttpFigure) => [
    name,
    fmt(f.requestsPerSecond),
    fmt(f.p50Ms, 2),
    fmt(f.p99Ms, 2),
    limitRatio(f),
    peerRatio(f),
    fmt(f.errors),
  ];
  return [
    row('redirector, clicks on', http.redirector),
    row('redirector, custom domain (Host)', http.customDomain),
    row('redirector, Android, plain intent', http.androidPlain),
    row('redirector, Android, Play + token', http.androidStore),
  ];
}

/**
 * The report of a `BENCH_ONLY=redirector` run: the full-speed table alone (the redirector's rows,
 * the limit and the peer), and the token row against the plain Android one.
 */
export function formatRedirectorReport(settings: BenchResult['settings'], http: Omit<BenchResult['http'], 'halfRate'>): string {
  const store = ratio(http.androidStore.requestsPerSecond, http.androidPlain.requestsPerSecond);
  return [
    httpHeading(settings),
    table([
      ['target', 'req/s', 'p50 ms', 'p99 ms', 'vs limit', 'vs peer', 'errors'],
      ['bare uWS 302 (limit)', fmt(http.limit.requestsPerSecond), fmt(http.limit.p50Ms, 2), fmt(http.limit.p99Ms, 2), '100.0 %', '', ''],
      ...redirectorRows(http),
      ['Fastify + Redis GET (peer)', fmt(http.peer.requestsPerSecond), fmt(http.peer.p50Ms, 2), fmt(http.peer.p99Ms, 2), '', '1.00×', ''],
    ]),
    `  Android, Play + token vs plain intent: ${pct(store)} (target ≥ 90 %)`,
  ].join('\n');
}

/** The human-readable report: HTTP table, pipeline figures, memory, targets. */
export function formatReport(r: BenchResult): string {
  const { http, ratios } = r;
  const row = (name: string, f: HttpFigure, toLimit: string, toPeer: string) => [
    name,
    fmt(f.requestsPerSecond),
    fmt(f.p50Ms, 2),
    fmt(f.p99Ms, 2),
    toLimit,
    toPeer,
    fmt(f.errors),
  ];
  const limitRatio = (f: HttpFigure) => pct(f.requestsPerSecond / http.limit.requestsPerSecond);
  const peerRatio = (f: HttpFigure) => times(f.requestsPerSecond / http.peer.requestsPerSecond);
  const s = r.settings;
  const lines = [
    httpHeading(s),
    table([
      ['target', 'req/s', 'p50 ms', 'p99 ms', 'vs limit', 'vs peer', 'errors'],
      row('bare uWS 302 (limit)', http.limit, '100.0 %', peerRatio(http.limit)),
      row('bare uWS 302 + client address', http.limitWithAddress, limitRatio(http.limitWithAddress), peerRatio(http.limitWithAddress)),
      row('redirector, clicks on', http.redirector, pct(ratios.toLimit), times(ratios.toPeer)),
      row('redirector, custom domain (Host)', http.customDomain, limitRatio(http.customDomain), peerRatio(http.customDomain)),
      row('redirector, Android, plain intent', http.androidPlain, limitRatio(http.androidPlain), peerRatio(http.androidPlain)),
      row('redirector, Android, Play + token', http.androidStore, limitRatio(http.androidStore), peerRatio(http.androidStore)),
      row('Fastify + Redis GET (peer)', http.peer, limitRatio(http.peer), '1.00×'),
      row('redirector at half rate', http.halfRate, '', ''),
    ]),
    `  half rate: aimed at ${fmt(http.halfRate.targetRps)} req/s with ${http.halfRate.connections} connections pausing ${http.halfRate.delayMs} ms on average after each answer`,
    `  click capture: ${fmt(r.clickCapture.flushed)} of ${fmt(r.clickCapture.buffered)} clicks written to the queue, ${fmt(r.clickCapture.dropped)} dropped`,
    '',
    `API, authenticated with a login token (GET) or an app key (POST, App SDK), the API on CPU ${s.serverCpus ?? '(unpinned)'}`,
    table([
      ['read', 'req/s', 'p50 ms', 'p99 ms', 'half-rate req/s', 'p50 ms', 'p99 ms', 'errors'],
      ...[
        ...Object.values(r.apiReads).map((figure) => ({ ...figure, method: 'GET' })),
        ...Object.values(r.appSdk).map((figure) => ({ ...figure, method: 'POST' })),
      ].map(({ method, path, max, halfRate }) => [
        `${method} ${path}`,
        fmt(max.requestsPerSecond),
        fmt(max.p50Ms, 2),
        fmt(max.p99Ms, 2),
        fmt(halfRate.requestsPerSecond),
        fmt(halfRate.p50Ms, 2),
        fmt(halfRate.p99Ms, 2),
        fmt(max.errors + halfRate.errors),
      ]),
    ]),
    '',
    ...[
      [
        'worker throughput',
        `${fmt(r.worker.clicksPerSecond)} clicks/s (${fmt(r.worker.clicks)} clicks in ${fmt(r.worker.jobs)} batches, ${fmt(r.worker.seconds, 2)} s; rollups hold ${fmt(r.worker.rolledUp)})`,
      ],
      ...(r.workerInstalls
        ? [
            [
              'worker, install tokens',
              `${fmt(r.workerInstalls.clicksPerSecond)} clicks/s (${fmt(r.workerInstalls.clicks)} clicks, ${r.workerInstalls.installPercent} % Android store visits with a token, ${fmt(r.workerInstalls.seconds, 2)} s; ${fmt(r.workerInstalls.installRows)} install rows)`,
            ],
          ]
        : []),
      [
        'freshness (302 → rollup)',
        `p50 ${fmt(r.freshness.p50Ms)} ms, p99 ${fmt(r.freshness.p99Ms)} ms, max ${fmt(r.freshness.maxMs)} ms (${r.freshness.samples} samples, ${r.freshness.timeouts} timed out)`,
      ],
      [
        'live stream freshness (302 → SSE message)',
        `p50 ${fmt(r.liveFreshness.p50Ms)} ms, p99 ${fmt(r.liveFreshness.p99Ms)} ms, max ${fmt(r.liveFreshness.maxMs)} ms (${r.liveFreshness.samples} samples, ${r.liveFreshness.timeouts} timed out)`,
      ],
      [
        'click loss',
        `${fmt(r.loss.loss)} (${fmt(r.loss.requests)} redirects, ${fmt(r.loss.botRequests)} from bots; ${fmt(r.loss.expected)} human clicks expected, ${fmt(r.loss.reported)} reported; ${r.loss.failedJobs} failed jobs)`,
      ],
      ['pipeline capacity', pipelineLine(r.pipeline)],
      ['one hot link', hotLinkLine(r.hotLink)],
      [
        'insert-per-click peer',
        `${fmt(r.insertPeer.requestsPerSecond)} req/s, p99 ${fmt(r.insertPeer.p99Ms, 2)} ms, ${fmt(r.insertPeer.errors)} errors (${fmt(r.insertPeer.rows)} rows inserted); the pipeline row is ${times(r.ratios.pipelineToInsertPeer)} that`,
      ],
      [
        'one-year hourly query',
        `p50 ${fmt(r.yearQuery.p50Ms, 1)} ms, p99 ${fmt(r.yearQuery.p99Ms, 1)} ms (${fmt(r.yearQuery.buckets)} buckets, ${r.yearQuery.requests} calls)`,
      ],
      [
        '  with two filters',
        `p50 ${fmt(r.yearQueryFiltered.p50Ms, 1)} ms, p99 ${fmt(r.yearQueryFiltered.p99Ms, 1)} ms (${r.yearQueryFiltered.filters}: ${fmt(r.yearQueryFiltered.totalClicks)} of ${fmt(r.yearQueryFiltered.yearClicks)} clicks, ${r.yearQueryFiltered.requests} calls)`,
      ],
    ].map(([label, value]) => `${label!.padEnd(26)}${value}`),
    '',
    ...cpuLines(r.pipeline),
    '',
    `peak RSS (MB): ${Object.entries(r.peakRssMB)
      .map(([name, mib]) => `${name} ${fmt(mib, 1)}`)
      .join(', ')}`,
    '',
    table([['targets', '', '', 'measured'], ...r.targets.map((t) => [t.pass ? 'pass' : 'MISS', t.name, t.target, t.value])], 3),
    '',
    `machine: ${r.machine.nproc} × ${r.machine.cpuModel}, ${fmt(r.machine.memoryGiB, 1)} GiB, Node ${r.machine.node}, ${r.machine.wrk}`,
  ];
  return lines.join('\n');
}

/** The pipeline row: the rate held, then each step tried. */
function pipelineLine(p: PipelineFigure): string {
  const held = p.heldRps === null ? 'no rate held' : `${fmt(p.heldRps)} req/s held for ${fmt(p.stepMs / 1000)} s`;
  const steps = p.steps.map(
    (step) =>
      `${fmt(step.requestsPerSecond)} req/s: freshness p99 ${fmt(step.freshness.p99Ms)} ms, oldest waiting batch ${fmt(step.maxQueueLagMs)} ms, loss ${fmt(step.loss)}${step.held ? '' : ` (MISS: ${step.misses.join('; ')})`}`,
  );
  return [
    `${held}; worker peak RSS ${fmt(p.workerPeakRssMB, 1)} MB; stopped: ${p.stoppedBecause}`,
    ...steps.map((step) => `${' '.repeat(28)}${step}`),
  ].join('\n');
}

/** The hot-link row: its one step, minute by minute. */
function hotLinkLine({ stepMs, step }: BenchResult['hotLink']): string {
  if (!step) return 'not run';
  const minutes = step.ratesByMinute.map((rate) => fmt(rate)).join(', ');
  return `${fmt(step.requestsPerSecond)} req/s for ${fmt(stepMs / 1000)} s${step.held ? ', held' : ` (MISS: ${step.misses.join('; ')})`}; freshness p99 ${fmt(step.freshness.p99Ms)} ms, loss ${fmt(step.loss)}; by minute: ${minutes} req/s`;
}

/** The step whose CPU cost describes the stack at capacity: the fastest that held, else the last tried. */
export function capacityCost(p: PipelineFigure): { step: PipelineStep; cpu: CpuCost } | undefined {
  const held = p.steps.filter((s) => s.held && s.cpu);
  const step =
    held.length > 0 ? held.reduce((a, b) => (b.requestsPerSecond > a.requestsPerSecond ? b : a)) : p.steps.findLast((s) => s.cpu);
  return step?.cpu ? { step, cpu: step.cpu } : undefined;
}

/** Where a click's CPU time went in the capacity step: by part, then Redis by command. */
function cpuLines(p: PipelineFigure): string[] {
  const cost = capacityCost(p);
  if (!cost) return [];
  const { step, cpu } = cost;
  const total = cpu.rows.reduce((sum, row) => sum + row.microsPerClick, 0);
  return [
    `CPU per click at ${fmt(step.requestsPerSecond)} req/s (${fmt(cpu.clicks)} clicks, ${fmt(cpu.seconds, 1)} s from the step's start until they were rolled up)`,
    table([
      ['part', 'CPU s', 'µs/click', 'of busy'],
      ...cpu.rows.map((row) => [row.name, fmt(row.cpuSeconds, 1), fmt(row.microsPerClick, 1), pct(row.share)]),
      [
        'total',
        fmt(
          cpu.rows.reduce((sum, row) => sum + row.cpuSeconds, 0),
          1,
        ),
        fmt(total, 1),
        '',
      ],
    ]),
    'Redis by command (its own time, not counting the network)',
    table([
      ['command', 'calls/click', 'µs/click'],
      ...cpu.redisCommands.slice(0, 8).map((c) => [c.command, fmt(c.callsPerClick, 3), fmt(c.microsPerClick, 2)]),
    ]),
  ];
}

/** Writes the result as indented JSON, creating the folder. */
export function writeResult(file: string, result: BenchResult): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
}

/**
 * A progress line on stderr: rewritten in place on a terminal, otherwise plain lines (phase
 * changes, and at most one update every `plainEveryMs`) so logs stay readable.
 */
export class Progress {
  private phaseName = '';
  private lastPlain = 0;
  private drawn = false;
  private readonly started: number;

  constructor(
    private readonly out: { write(text: string): unknown; isTTY?: boolean } = process.stderr,
    private readonly plainEveryMs = 5_000,
    private readonly now: () => number = Date.now,
  ) {
    this.started = now();
  }

  /** Starts a phase: `[3/9] redirector: …`. */
  phase(name: string): void {
    this.phaseName = name;
    this.lastPlain = this.now();
    this.write(name);
  }

  /** Progress within the phase. */
  update(detail: string): void {
    const text = `${this.phaseName}: ${detail}`;
    if (this.out.isTTY) {
      this.write(text);
      return;
    }
    if (this.now() - this.lastPlain < this.plainEveryMs) return;
    this.lastPlain = this.now();
    this.write(text);
  }

  /** A line that stays, whatever the output (the in-place line is redrawn under it). */
  note(text: string): void {
    this.end();
    this.write(text);
    this.end();
  }

  /** Ends the in-place line so the report starts on a fresh line. */
  end(): void {
    if (this.out.isTTY && this.drawn) this.out.write('\n');
    this.drawn = false;
  }

  private write(text: string): void {
    const line = `[bench +${Math.round((this.now() - this.started) / 1000)}s] ${text}`;
    if (this.out.isTTY) {
      this.out.write(`\r\x1b[2K${line}`);
      this.drawn = true;
    } else {
      this.out.write(`${line}\n`);
    }
  }
}
