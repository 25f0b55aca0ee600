import type { BenchResult, HttpFigure } from './report.js';
import { formatReport } from './report.js';

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
    row('Fastify + Redis GET (peer)', http.peer),
    row('redirector at half rate', http.halfRate),
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
