// The insert-per-click peer: what most Node shorteners do to count a visit. Fastify, one Redis GET
// of the link's record (the same key the API writes and the redirector reads), one INSERT of the
// click into PostgreSQL, awaited, then a 302. Awaiting the insert keeps the comparison honest: a
// peer that answers first and inserts later only moves its backlog into memory, where a restart
// loses it. No queue, no batching, no rollups: reports would count these rows at read time.
import { DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL, redisKeys } from '@deeplink/core';
import { createDatabase } from '@deeplink/core/db';
import { createRedis, parseCachedLink } from '@deeplink/core/redis';
import Fastify from 'fastify';

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 8083);
const keys = redisKeys(process.env.REDIS_PREFIX ?? '');
const redis = createRedis(process.env.REDIS_URL ?? DEFAULT_REDIS_URL);
// A pool as large as the services' default: the peer's rate is set by its inserts.
const sql = createDatabase(process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL, {
  max: Number(process.env.DATABASE_POOL_MAX ?? 10),
  applicationName: 'bench-insert-peer',
});

// Its own table, as such a service would have: one row per click with what the redirector queues.
await sql`
  CREATE TABLE IF NOT EXISTS peer_clicks (
    id bigserial PRIMARY KEY,
    link_id uuid NOT NULL,
    clicked_at timestamptz NOT NULL DEFAULT now(),
    ip text NOT NULL,
    user_agent text NOT NULL,
    referrer text NOT NULL
  )`;
await sql`CREATE INDEX IF NOT EXISTS peer_clicks_link_time ON peer_clicks (link_id, clicked_at)`;

const app = Fastify({ logger: false });
app.get<{ Params: { code: string } }>('/:code', async (request, reply) => {
  const link = parseCachedLink(await redis.get(keys.link(request.params.code)));
  if (!link) return reply.code(404).type('text/plain').send('Not Found\n');
  await sql`
    INSERT INTO peer_clicks (link_id, ip, user_agent, referrer)
    VALUES (${link.id}, ${request.ip}, ${request.headers['user-agent'] ?? ''}, ${request.headers.referer ?? ''})`;
  return reply.header('Cache-Control', 'private, no-store').redirect(link.defaultUrl, 302);
});

await app.listen({ host, port });
console.log(`insert-peer listening on ${host}:${port}`);

const stop = async () => {
  await app.close();
  await sql.end({ timeout: 5 });
  redis.disconnect();
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
