import type { FastifyInstance } from 'fastify';
import type { RedisClient } from '@deeplink/core';
import type { Sql } from '@deeplink/core';

const withTimeout = <T>(promise: Promise<T>, ms: number): Promise<T> =>
  Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timed out')), ms).unref())]);

/** Liveness and readiness, outside /api and outside rate limits (load balancers poll them). */
export function registerHealthRoutes(app: FastifyInstance, deps: { sql: Sql; redis: RedisClient }): void {
  app.get('/healthz', { schema: { hide: true }, config: { rateLimitScope: 'none' } }, async () => ({ success: true, data: { status: 'ok' } }));

  app.get('/readyz', { schema: { hide: true }, config: { rateLimitScope: 'none' } }, async (_request, reply) => {
    const [postgres, redis] = await Promise.all([
      withTimeout(deps.sql`SELECT 1`, 2000).then(() => 'ok', () => 'down'),
      withTimeout(deps.redis.ping(), 2000).then(() => 'ok', () => 'down'),
    ]);
    const ready = postgres === 'ok' && redis === 'ok';
    if (ready) return { success: true, data: { status: 'ready', postgres, redis } };
    return reply.status(503).send({
      success: false,
      error: { code: 'INTERNAL_ERROR', message: 'Not ready: a backing service is down', details: [
        ...(postgres === 'down' ? [{ field: 'postgres', message: 'unreachable' }] : []),
        ...(redis === 'down' ? [{ field: 'redis', message: 'unreachable' }] : []),
      ] },
    });
  });
}
