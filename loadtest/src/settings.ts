import { availableParallelism } from 'node:os';
import { parseDuration } from './stats.js';

/** Everything a bench run can be told through the environment (docs/loadtest.md lists them). */
export interface BenchSettings {
  /** Measured time per target at full speed, and of the half-rate run (BENCH_DURATION, default 30s). */
  durationMs: number;
  /** Rounds the full-speed time is interleaved in, each target getting a slice of each (BENCH_ROUNDS, 10). */
  rounds: number;
  /** Unmeasured wrk run before each target, to fill caches and let the JIT settle (BENCH_WARMUP, 2s). */
  warmupMs: number;
  /** wrk connections for the maximum-rate runs (BENCH_CONNECTIONS, 32). */
  connections: number;
  /** Links seeded through the API and rotated by wrk (BENCH_LINKS, 1000). */
  links: number;
  /** Clicks pre-filled into the queue for the worker measurement (BENCH_WORKER_CLICKS, 300000). */
  workerClicks: number;
  /**
   * Percent of the clicks of the worker's second row that are Android store visits with an install
   * token (BENCH_INSTALL_PERCENT, 20); 0 leaves the row out.
   */
  installPercent: number;
  /** Redirects sent by the loss measurement (BENCH_LOSS_REQUESTS, 20000). */
  lossRequests: number;
  /** Redirect-to-rollup samples (BENCH_FRESHNESS_SAMPLES, 50). */
  freshnessSamples: number;
  /** Clicks in every hour of the query link's year, rolled up by the worker (BENCH_YEAR_CLICKS_PER_HOUR, 40). */
  yearClicksPerHour: number;
  /** Calls of the one-year hourly analytics query (BENCH_QUERY_REQUESTS, 100). */
  queryRequests: number;
  /** How long the pipeline row holds each rate (BENCH_PIPELINE_STEP, 60s). */
  pipelineStepMs: number;
  /** The pipeline row's first rate, in redirects/s (BENCH_PIPELINE_START_RATE, 25000). */
  pipelineStartRps: number;
  /** Each next rate is the previous one times this (BENCH_PIPELINE_FACTOR, 1.25). */
  pipelineFactor: number;
  /** Most rates tried (BENCH_PIPELINE_STEPS, 6). */
  pipelineSteps: number;
  /** How long the hot-link row holds the capacity row's rate on one link (BENCH_HOT_LINK_DURATION, 5m). */
  hotLinkMs: number;
  /** CPU list for the server under test and for wrk (BENCH_SERVER_CPUS=0, BENCH_WRK_CPUS=1); unset = no pinning. */
  serverCpus?: string;
  wrkCpus?: string;
  /** Where the JSON result goes (BENCH_OUTPUT, default .bench/bench-<time>.json). */
  output?: string;
  /** Keep the bench database and Redis keys afterwards, for inspection (BENCH_KEEP=1). */
  keep: boolean;
  /**
   * `redirector`: only the full-speed table (the redirector's rows, the limit and the peer), for
   * comparing two versions of the redirector quickly; nothing else runs and docs/performance.md is
   * left alone (BENCH_ONLY; unset: everything).
   */
  only?: 'redirector';
  /** Processes to run under `--cpu-prof` (BENCH_PROFILE=redirector,worker,api,…); profiles go to .bench/profiles/. */
  profile: string[];
}

const int = (env: NodeJS.ProcessEnv, name: string, fallback: number, min = 1): number => {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer ≥ ${min}, got "${text}"`);
  return value;
};

const factor = (env: NodeJS.ProcessEnv, name: string, fallback: number): number => {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 1) throw new Error(`${name} must be a number > 1, got "${text}"`);
  return value;
};

const percent = (env: NodeJS.ProcessEnv, name: string, fallback: number): number => {
  const value = int(env, name, fallback, 0);
  if (value > 100) throw new Error(`${name} must be a percentage (0 to 100), got "${env[name]}"`);
  return value;
};

const only = (text: string | undefined): BenchSettings['only'] => {
  if (text === undefined || text === '') return undefined;
  if (text !== 'redirector') throw new Error(`BENCH_ONLY must be "redirector" or unset, got "${text}"`);
  return text;
};

/** Reads the settings; pins server and wrk to different cores when there are at least two. */
export function loadSettings(env: NodeJS.ProcessEnv = process.env, cores = availableParallelism()): BenchSettings {
  const pin = env.BENCH_PIN !== '0' && cores >= 2;
  return {
    durationMs: parseDuration(env.BENCH_DURATION || '30s'),
    rounds: int(env, 'BENCH_ROUNDS', 10),
    warmupMs: parseDuration(env.BENCH_WARMUP || '2s'),
    connections: int(env, 'BENCH_CONNECTIONS', 32),
    links: int(env, 'BENCH_LINKS', 1000),
    workerClicks: int(env, 'BENCH_WORKER_CLICKS', 300_000),
    installPercent: percent(env, 'BENCH_INSTALL_PERCENT', 20),
    lossRequests: int(env, 'BENCH_LOSS_REQUESTS', 20_000),
    freshnessSamples: int(env, 'BENCH_FRESHNESS_SAMPLES', 50),
    yearClicksPerHour: int(env, 'BENCH_YEAR_CLICKS_PER_HOUR', 40),
    queryRequests: int(env, 'BENCH_QUERY_REQUESTS', 100),
    pipelineStepMs: parseDuration(env.BENCH_PIPELINE_STEP || '60s'),
    pipelineStartRps: int(env, 'BENCH_PIPELINE_START_RATE', 25_000),
    pipelineFactor: factor(env, 'BENCH_PIPELINE_FACTOR', 1.25),
    pipelineSteps: int(env, 'BENCH_PIPELINE_STEPS', 6),
    hotLinkMs: parseDuration(env.BENCH_HOT_LINK_DURATION || '5m'),
    serverCpus: pin ? env.BENCH_SERVER_CPUS || '0' : undefined,
    wrkCpus: pin ? env.BENCH_WRK_CPUS || String(cores - 1) : undefined,
    output: env.BENCH_OUTPUT || undefined,
    keep: env.BENCH_KEEP === '1',
    only: only(env.BENCH_ONLY),
    profile: (env.BENCH_PROFILE ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean),
  };
}
