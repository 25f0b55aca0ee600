import { rateLimited, type RedisKeys } from '@deeplink/core';
import type { FastifyReply } from 'fastify';
import type { RedisClient } from '@deeplink/core';

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
