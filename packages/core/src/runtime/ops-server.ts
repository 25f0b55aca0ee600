import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Gauge, type Registry } from 'prom-client';
import type { Logger } from './logger.js';
import { LIVENESS_BODY, readinessStatus, type ReadinessReport } from './readiness.js';

export interface OpsServerDeps {
  registry: Registry;
  readiness: () => Promise<ReadinessReport>;
  logger: Logger;
}

/**
 * The listener for operators, never exposed to visitors: GET /metrics (Prometheus), /healthz and
 * /readyz with the detail of each check. Every service runs one, on its own port.
 */
export function createOpsServer({ registry, readiness, logger }: OpsServerDeps): Server {
  registerReadinessMetrics(registry, readiness);
  return createServer((request, response) => {
    const reply = (status: number, type: string, body: string) => {
      response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      response.end(request.method === 'HEAD' ? undefined : body);
    };
    if (request.method !== 'GET' && request.method !== 'HEAD') return reply(405, 'text/plain', 'Method Not Allowed\n');
    const path = request.url?.split('?')[0];
    const answer =
      path === '/metrics'
        ? registry.metrics().then((body) => reply(200, registry.contentType, body))
        : path === '/readyz'
          ? readiness().then((report) => reply(readinessStatus(report), 'application/json', JSON.stringify(report)))
          : path === '/healthz'
            ? Promise.resolve(reply(200, 'application/json', LIVENESS_BODY))
            : Promise.resolve(reply(404, 'text/plain', 'Not Found\n'));
    answer.catch((error: unknown) => {
      logger.error({ err: error, path }, 'ops request failed');
      if (!response.headersSent) reply(500, 'text/plain', 'Internal Server Error\n');
    });
  });
}

/**
 * Readiness as metrics, read when Prometheus scrapes: `deeplink_ready` (1 or 0) and
 * `deeplink_dependency_up{dependency}` per check, so dashboards and alerts see what /readyz says.
 */
function registerReadinessMetrics(registry: Registry, readiness: () => Promise<ReadinessReport>): void {
  let latest: Promise<ReadinessReport> | undefined;
  // Both gauges are collected in one scrape: probe once for the two.
  const report = () => (latest ??= readiness().finally(() => setTimeout(() => (latest = undefined), 100).unref()));
  new Gauge({
    name: 'deeplink_ready',
    help: '1 when the service is ready (every readiness check passes), else 0.',
    registers: [registry],
    async collect() {
      this.set((await report()).status === 'ok' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'deeplink_dependency_up',
    help: "Each readiness check: 1 when it passes, else 0 (redis, postgres, and the service's own).",
    labelNames: ['dependency'],
    registers: [registry],
    async collect() {
      for (const [dependency, state] of Object.entries((await report()).checks)) this.set({ dependency }, state === 'ok' ? 1 : 0);
    },
  });
}

/** Starts listening; resolves with the bound port (useful with port 0). */
export function listenOn(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Stops listening and ends idle keep-alive connections (Prometheus keeps one open). */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}
