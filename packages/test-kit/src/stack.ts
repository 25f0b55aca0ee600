import { freePort, healthy, startProcess, type RunningProcess } from './processes.js';

/** The three services as real processes, with the addresses of their public and metrics listeners. */
export interface Stack {
  api: RunningProcess;
  redirector: RunningProcess;
  worker: RunningProcess;
  apiUrl: string;
  shortUrlBase: string;
  /** Each service's metrics listener (/metrics, /readyz with detail). */
  ops: { api: string; redirector: string; worker: string };
  /** SIGTERM to all three; resolves with their exit codes. */
  stop(): Promise<(number | null)[]>;
}

/** Starts the API, then the redirector and the worker, on spare ports, with `env` (a test environment's). */
export async function startStack(env: Record<string, string>): Promise<Stack> {
  const [apiPort, redirectorPort, apiMetricsPort, redirectorMetricsPort, workerPort] = (await Promise.all(
    Array.from({ length: 5 }, freePort),
  )) as [number, number, number, number, number];
  const url = (port: number) => `http://127.0.0.1:${port}`;
  const common = {
    ...env,
    // Info: tests read the processes' log lines.
    LOG_LEVEL: 'info',
    SHORT_URL_BASE: url(redirectorPort),
    API_PORT: String(apiPort),
    API_METRICS_PORT: String(apiMetricsPort),
    REDIRECTOR_PORT: String(redirectorPort),
    REDIRECTOR_METRICS_PORT: String(redirectorMetricsPort),
    WORKER_PORT: String(workerPort),
  };
  const ops = { api: url(apiMetricsPort), redirector: url(redirectorMetricsPort), worker: url(workerPort) };
  const api = await startProcess('api', { env: common, ready: healthy(ops.api) });
  const [redirector, worker] = await Promise.all([
    startProcess('redirector', { env: common, ready: healthy(ops.redirector) }),
    startProcess('worker', { env: common, ready: healthy(ops.worker) }),
  ]);
  return {
    api,
    redirector,
    worker,
    apiUrl: url(apiPort),
    shortUrlBase: url(redirectorPort),
    ops,
    stop: () => Promise.all([api.stop(), redirector.stop(), worker.stop()]),
  };
}
