import type { BenchResult, HttpFigure } from './report.js';
import { capacityCost, formatReport } from './report.js';

/**
 * docs/performance.md, written by every default `npm run bench` (never by hand): the latest run in
 * full, each HTTP row beside the bare server measured in the same run, and one line per run in a
 * history table that each run carries over from the file it replaces.
 */
export const HISTORY_START = '<!-- history:start -->';
export const HISTORY_END = '<!-- history:end -->';
/** Runs kept in the history table, newest first. */
export const HISTORY_ROWS = 30;

const fmt = (value: number | null | undefined, digits = 0) =>
  value === null || value === undefined || !Number.isFinite(value)
    ? 'n/a'
    : value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const pct = (part: number, whole: number) => `${fmt((part / whole) * 100, 1)} %`;
const minute = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;

const HISTORY_HEADER = [
  '| run (UTC) | machine | Node | bare uWS req/s | redirector req/s | of bare | worker clicks/s | pipeline req/s held | GET /api/auth/me req/s | one-year query p99 ms |',
  '|---|---|---|--:|--:|--:|--:|--:|--:|--:|',
];

/** The history line of one run. */
export function historyRow(r: BenchResult): string {
  const { http } = r;
  return `| ${minute(r.startedAt)} | ${r.machine.nproc} × ${r.machine.cpuModel} | ${r.machine.node} | ${fmt(http.limit.requestsPerSecond)} | ${fmt(http.redirector.requestsPerSecond)} | ${pct(http.redirector.requestsPerSecond, http.limit.requestsPerSecond)} | ${fmt(r.worker.clicksPerSecond)} | ${fmt(r.pipeline.heldRps)} | ${fmt(r.apiReads.me.max.requestsPerSecond)} | ${fmt(r.yearQuery.p99Ms, 1)} |`;
}

/** The history rows of a document this function wrote before (none from anything else). */
export function previousHistory(document: string | undefined): string[] {
  if (!document) return [];
  const start = document.indexOf(HISTORY_START);
  const end = document.indexOf(HISTORY_END);
  if (start < 0 || end < start) return [];
  return document
    .slice(start + HISTORY_START.length, end)
    .split('\n')
    .filter((line) => /^\| \d{4}-\d{2}-\d{2} /.test(line));
}

function httpTable(r: BenchResult): string[] {
  const { http } = r;
  const limit = http.limit.requestsPerSecond;
  const row = (name: string, f: HttpFigure) =>
    `| ${name} | ${fmt(f.requestsPerSecond)} | ${fmt(f.p50Ms, 2)} | ${fmt(f.p99Ms, 2)} | ${fmt(limit)} | ${pct(f.requestsPerSecond, limit)} | ${fmt(f.errors)} |`;
  return [
    '| target | req/s | p50 ms | p99 ms | bare uWS req/s, same run | of bare | errors |',
    '|---|--:|--:|--:|--:|--:|--:|',
    row('bare uWS 302 (the limit)', http.limit),
    row('bare uWS 302 + client address', http.limitWithAddress),
    row('redirector, clicks on', http.redirector),
    row('redirector, custom domain (Host)', http.customDomain),
    row('redirector, Android, plain intent', http.androidPlain),
    row('redirector, Android, Play + token', http.androidStore),
    row('Fastify + Redis GET (peer)', http.peer),
    row('redirector at half rate', http.halfRate),
  ];
}

/** The whole stack's rows: capacity, one hot link, and the insert-per-click peer on the same machine. */
function pipelineTable(r: BenchResult): string[] {
  const held = r.pipeline.heldRps;
  const hot = r.hotLink.step;
  const vs = (rps: number) => (held ? `${fmt(held / rps, 2)}×` : 'n/a');
  return [
    '| whole stack, loss 0, freshness p99 ≤ 1 s | req/s | freshness p99 ms | pipeline row vs this |',
    '|---|--:|--:|--:|',
    `| capacity: ${fmt(r.settings.links)} links, ${fmt(r.pipeline.stepMs / 1000)} s per rate | ${fmt(held)} | ${fmt(capacityCost(r.pipeline)?.step.freshness.p99Ms)} | 1.00× |`,
    hot
      ? `| one hot link for ${fmt(r.hotLink.stepMs / 1000)} s${hot.held ? '' : ' (not held)'}; by minute ${hot.ratesByMinute.map((rate) => fmt(rate)).join(', ')} | ${fmt(hot.requestsPerSecond)} | ${fmt(hot.freshness.p99Ms)} | ${vs(hot.requestsPerSecond)} |`
      : '| one hot link | not run | | |',
    `| insert-per-click peer (Fastify, Redis GET, PostgreSQL INSERT) | ${fmt(r.insertPeer.requestsPerSecond)} | | ${vs(r.insertPeer.requestsPerSecond)} |`,
  ];
}

/**
 * Where a click's CPU time goes at capacity, part by part, and Redis command by command: the CPU
 * seconds each process spent from the step's start until its clicks were rolled up, per click.
 */
function cpuTable(r: BenchResult): string[] {
  const cost = capacityCost(r.pipeline);
  if (!cost) return ['Not measured in this run.'];
  const { step, cpu } = cost;
  const total = cpu.rows.reduce((sum, row) => sum + row.microsPerClick, 0);
  return [
    `At ${fmt(step.requestsPerSecond)} req/s, ${fmt(cpu.clicks)} clicks, ${fmt(cpu.seconds, 1)} s from the step's start until the last was rolled up:`,
    '',
    "| part | CPU µs per click | of the machine's busy time |",
    '|---|--:|--:|',
    ...cpu.rows.map((row) => `| ${row.name} | ${fmt(row.microsPerClick, 1)} | ${pct(row.share, 1)} |`),
    `| all | ${fmt(total, 1)} | |`,
    '',
    'Redis, command by command (time inside Redis only):',
    '',
    '| command | calls per click | µs per click |',
    '|---|--:|--:|',
    ...cpu.redisCommands.slice(0, 10).map((c) => `| ${c.command} | ${fmt(c.callsPerClick, 3)} | ${fmt(c.microsPerClick, 2)} |`),
  ];
}

/** The whole document for `result`, carrying over the history of `previous` (the file it replaces). */
export function performanceDocument(result: BenchResult, previous: string | undefined): string {
  const history = [historyRow(result), ...previousHistory(previous)].slice(0, HISTORY_ROWS);
  const { machine } = result;
  return [
    '# Performance',
    '',
    'Written by `npm run bench` at the end of every run with the default output; not edited by hand.',
    'What each figure measures, the targets and the settings: [loadtest.md](loadtest.md). Absolute',
    "figures follow the machine's speed of the moment, which swings; compare a row with the bare",
    'server of the same run beside it, and runs of two releases made in the same hour.',
    '',
    `## Latest run: ${minute(result.startedAt)} to ${result.finishedAt.slice(11, 16)} UTC`,
    '',
    `${machine.nproc} × ${machine.cpuModel}, ${fmt(machine.memoryGiB, 1)} GiB, Node ${machine.node}, ${machine.wrk}.`,
    '',
    ...httpTable(result),
    '',
    '### The whole pipeline',
    '',
    ...pipelineTable(result),
    '',
    "### Where a click's CPU time goes",
    '',
    ...cpuTable(result),
    '',
    'The full report, as the bench printed it:',
    '',
    '```',
    formatReport(result),
    '```',
    '',
    '## History',
    '',
    'Newest first, one line per run.',
    '',
    HISTORY_START,
    ...HISTORY_HEADER,
    ...history,
    HISTORY_END,
    '',
  ].join('\n');
}
