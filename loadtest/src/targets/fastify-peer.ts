// The peer: what a typical Node shortener does per visit. Fastify, one Redis GET of the link's
// record (the same key the API writes and the redirector reads), then a 302 to its default URL.
// No in-process cache and no click capture.
import { DEFAULT_REDIS_URL, redisKeys } from '@deeplink/core';
import { createRedis, parseCachedLink } from '@deeplink/core/redis';
import Fastify from 'fastify';

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 8082);
const keys = redisKeys(process.env.REDIS_PREFIX ?? '');
// The services' own client settings (auto-pipelining on), so the peer is not handicapped by Redis.
const redis = createRedis(process.env.REDIS_URL ?? DEFAULT_REDIS_URL);

const app = Fastify({ logger: false });
app.get<{ Params: { code: string } }>('/:code', async (request, reply) => {
  const link = parseCachedLink(await redis.get(keys.link(request.params.code)));
  if (!link) return reply.code(404).type('text/plain').send('Not Found\n');
  return reply.header('Cache-Control', 'private, no-store').redirect(link.defaultUrl, 302);
});

await app.listen({ host, port });
console.log(`fastify-peer listening on ${host}:${port}`);

const stop = async () => {
  await app.close();
  redis.disconnect();
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
