import { type Config, rateLimited, type RedisKeys } from '@deeplink/core';
import type { RedisClient } from '@deeplink/core/redis';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

export interface RateLimitRule {
  /** Counter namespace: `user`, `anonymous` or `auth`. */
  scope: string;
  max: number;
  windowSeconds: number;
}

/**
 * Fixed-window counters in Redis, so limits hold across API instances. Every response gets
 * X-RateLimit-Limit/Remaining/Reset (Reset in Unix epoch seconds); over the limit, 429 RATE_LIMITED
 * with Retry-After.
 */
export function rateLimiter(redis: RedisClient, keys: RedisKeys) {
  /** Counts `units` requests against the subject's window (a bulk request counts one per link). */
  return async function limit(rule: RateLimitRule, subject: string, reply: FastifyReply, units = 1): Promise<void> {
    const now = Date.now() / 1000;
    const window = Math.floor(now / rule.windowSeconds);
    const resetAt = (window + 1) * rule.windowSeconds;
    const key = keys.rateLimit(rule.scope, subject, window);
    const [[, count]] = (await redis.multi().incrby(key, units).expire(key, rule.windowSeconds + 1).exec()) as [[null, number]];
    reply.header('X-RateLimit-Limit', rule.max);
    reply.header('X-RateLimit-Remaining', Math.max(0, rule.max - count));
    reply.header('X-RateLimit-Reset', resetAt);
    if (count > rule.max) {
      const retryAfter = Math.max(1, Math.ceil(resetAt - now));
      throw rateLimited(`Rate limit of ${rule.max} requests per ${rule.windowSeconds}s exceeded; retry in ${retryAfter}s`, retryAfter);
    }
  };
}
export type RateLimiter = ReturnType<typeof rateLimiter>;

/**
 * Failed credentials per client address, checked before any credential is looked up: past `max`
 * failures in a window, requests from that address carrying credentials get 429 without a
 * database query (500 made-up API keys cost `max` queries, not 500). If Redis is unreachable the
 * guard lets requests through, as the limiter does.
 */
export function credentialFailures(redis: RedisClient, keys: RedisKeys, rule: { max: number; windowSeconds: number }) {
  const current = () => {
    const now = Date.now() / 1000;
    const window = Math.floor(now / rule.windowSeconds);
    return { now, window, resetAt: (window + 1) * rule.windowSeconds };
  };
  return {
    async check(address: string): Promise<void> {
      const { now, window, resetAt } = current();
      const count = Number(await redis.get(keys.credentialFailures(address, window)).catch(() => null));
      if (count < rule.max) return;
      const retryAfter = Math.max(1, Math.ceil(resetAt - now));
      throw rateLimited(`Too many failed credentials from this address; retry in ${retryAfter}s`, retryAfter);
    },
    async record(address: string): Promise<void> {
      const key = keys.credentialFailures(address, current().window);
      await redis.multi().incr(key).expire(key, rule.windowSeconds + 1).exec().catch(() => {});
    },
  };
}
export type CredentialFailures = ReturnType<typeof credentialFailures>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Which rate limit applies: `auth` (per address, strict), `none`, or by default per caller. */
    rateLimitScope?: 'auth' | 'none';
    /**
     * How many requests this one counts as against the caller's rate limit, read once the body is
     * validated (a bulk request: one per link it touches). Default 1.
     */
    rateLimitUnits?: (request: FastifyRequest) => number;
  }
}

/**
 * The API's limits as hooks on every route: per user when authenticated, per address otherwise,
 * per address and strict on register and login (`rateLimitScope`), none on health checks. A route
 * worth more than one request says so with `rateLimitUnits`.
 */
export const rateLimits = fp<{ limit: RateLimiter; config: Config }>(async (app, { limit, config }) => {
  const window = config.RATE_LIMIT_WINDOW_SECONDS;
  const rules = {
    auth: { scope: 'auth', max: config.RATE_LIMIT_AUTH_MAX, windowSeconds: window },
    user: { scope: 'user', max: config.RATE_LIMIT_MAX, windowSeconds: window },
    anonymous: { scope: 'anonymous', max: config.RATE_LIMIT_ANONYMOUS_MAX, windowSeconds: window },
  } satisfies Record<string, RateLimitRule>;

  const ruleOf = (request: FastifyRequest): [RateLimitRule, string] | undefined => {
    const scope = request.routeOptions.config.rateLimitScope;
    if (scope === 'none') return undefined;
    return scope === 'auth' ? [rules.auth, request.ip]
      : request.principal ? [rules.user, request.principal.userId]
      : [rules.anonymous, request.ip];
  };
  const charge = async (request: FastifyRequest, reply: FastifyReply, units: number) => {
    const applies = ruleOf(request);
    if (!applies || units <= 0) return;
    try {
      await limit(applies[0], applies[1], reply, units);
    } catch (error) {
      if ((error as { code?: string }).code === 'RATE_LIMITED') throw error;
      // Redis unreachable: serve the request rather than fail it; limits resume with Redis.
      request.log.warn({ err: error }, 'rate limiter unavailable; request allowed');
    }
  };

  // Every request counts once on arrival, before its body is read…
  app.addHook('onRequest', async (request, reply) => charge(request, reply, 1));
  // …and a request worth more (rateLimitUnits) is charged the rest once its body is valid, before it does anything.
  app.addHook('preHandler', async (request, reply) => {
    const units = request.routeOptions.config.rateLimitUnits;
    if (units) await charge(request, reply, units(request) - 1);
  });
}, { name: 'rate-limits', dependencies: ['authentication'] });
