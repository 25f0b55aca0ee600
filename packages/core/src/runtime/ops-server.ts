import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
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
  return createServer((request, response) => {
    const reply = (status: number, type: string, body: string) => {
      response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      response.end(request.method === 'HEAD' ? undefined : body);
    };
    if (request.method !== 'GET' && request.method !== 'HEAD') return reply(405, 'text/plain', 'Method Not Allowed\n');
    const path = request.url?.split('?')[0];
    const answer =
      path === '/metrics' ? registry.metrics().then((body) => reply(200, registry.contentType, body))
      : path === '/readyz' ? readiness().then((report) => reply(readinessStatus(report), 'application/json', JSON.stringify(report)))
      : path === '/healthz' ? Promise.resolve(reply(200, 'application/json', LIVENESS_BODY))
      : Promise.resolve(reply(404, 'text/plain', 'Not Found\n'));
    answer.catch((error: unknown) => {
      logger.error({ err: error, path }, 'ops request failed');
      if (!response.headersSent) reply(500, 'text/plain', 'Internal Server Error\n');
    });
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
