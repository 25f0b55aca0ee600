import type { FastifyInstance } from 'fastify';
import { LIVENESS_BODY, type ReadinessReport, readinessStatus } from '@deeplink/core/runtime';

/**
 * Liveness and readiness for load balancers, outside /api and outside rate limits. The public
 * /readyz says only whether the API is ready; which dependency is down is on the metrics listener.
 */
export async function healthRoutes(app: FastifyInstance, { readiness }: { readiness: () => Promise<ReadinessReport> }): Promise<void> {
  const options = { schema: { hide: true }, config: { rateLimitScope: 'none' as const } };
  app.get('/healthz', options, async (_request, reply) => reply.type('application/json').send(LIVENESS_BODY));
  app.get('/readyz', options, async (_request, reply) => {
    const report = await readiness();
    return reply.status(readinessStatus(report)).type('application/json').send({ status: report.status });
  });
}
