import { createServer, type Server } from 'node:http';
import type { RedisClient } from '@deeplink/core';
import type { Sql } from '@deeplink/core';

const CHECK_TIMEOUT_MS = 2000;

const withTimeout = <T>(promise: Promise<T>): Promise<T> =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timed out')), CHECK_TIMEOUT_MS).unref()),
  ]);

/** GET /healthz: the process runs. GET /readyz: RedisClient and PostgreSQL answer. Nothing else. */
export function createHealthServer(deps: { sql: Sql; redis: RedisClient }): Server {
  return createServer((request, response) => {
    const reply = (status: number, body: Record<string, unknown>) => {
      response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      response.end(JSON.stringify(body));
    };
    if (request.method !== 'GET' && request.method !== 'HEAD') return reply(405, { status: 'method not allowed' });
    if (request.url === '/healthz') return reply(200, { status: 'ok' });
    if (request.url !== '/readyz') return reply(404, { status: 'not found' });
    const check = (probe: () => Promise<unknown>) => withTimeout(probe()).then(() => 'ok', () => 'unavailable');
    void Promise.all([check(() => deps.redis.ping()), check(() => deps.sql`SELECT 1`)]).then(([redis, postgres]) => {
      const ready = redis === 'ok' && postgres === 'ok';
      reply(ready ? 200 : 503, { status: ready ? 'ok' : 'unavailable', redis, postgres });
    });
  });
}
