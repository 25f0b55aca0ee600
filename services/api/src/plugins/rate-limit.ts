import fastifyRateLimit from '@fastify/rate-limit';
import { addressLimitKey, type Config, rateLimited, type RedisKeys } from '@deeplink/core';
import type { RedisClient } from '@deeplink/core/redis';
import { rateLimitedLog } from '@deeplink/core/runtime';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Counts one request against the caller's limit; throws the 429 past it. For requests no hook
     * saw (router errors), and for the app key's limit once the app routes know the key.
     */
    chargeRateLimit(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  }
  interface FastifyContextConfig {
    /**
     * Which rate limit applies: `auth` (per address, strict), `app` (the app endpoints: per address
     * on arrival, then per app key once the key is known), `none`, or by default per caller.
     */
    rateLimitScope?: 'auth' | 'app' | 'none';
    /**
     * How many requests this one counts as against the caller's rate limit, read once the body is
     * validated (a bulk request: one per link it touches). Default 1.
     */
    rateLimitUnits?: (request: FastifyRequest) => number;
  }
}

type Scope = 'auth' | 'user' | 'anonymous' | 'app-address' | 'app-key';

/**
 * The address a per-address limit counts under: IPv4 as it is, IPv6 by its /64 (the rule the
 * redirector's unknown-code budget keys by too).
 */
export const addressSubject = (request: FastifyRequest): string => addressLimitKey(request.ip);

/** The rule a request falls under and whom it is counted against; undefined for unlimited routes. */
function subjectOf(request: FastifyRequest): { scope: Scope; subject: string } | undefined {
  const scope = request.routeOptions.config.rateLimitScope;
  if (scope === 'none') return undefined;
  if (scope === 'auth') return { scope: 'auth', subject: addressSubject(request) };
  if (scope === 'app')
    return request.appCaller
      ? { scope: 'app-key', subject: request.appCaller.id }
      : { scope: 'app-address', subject: addressSubject(request) };
  return request.principal
    ? { scope: 'user', subject: request.principal.userId }
    : { scope: 'anonymous', subject: addressSubject(request) };
}

/**
 * The API's rate limits, counted by @fastify/rate-limit in Redis (its RedisStore: one script per
 * request, so limits hold across API instances): per user when authenticated, per address
 * otherwise, per address and strict on register and login (`rateLimitScope`), on the app
 * endpoints per address and then per app key (each call counts once against both), none on
 * health checks. A window starts at a subject's first request and lasts RATE_LIMIT_WINDOW_SECONDS.
 *
 * The plugin counts; this hook picks the rule and answers, because two things here are not the
 * plugin's defaults: X-RateLimit-Reset is the Unix time the window ends (the plugin sends seconds
 * left), and a route worth more than one request (`rateLimitUnits`, a bulk create) is charged the
 * rest once its body is valid. Over the limit the answer is the envelope's 429 RATE_LIMITED with
 * Retry-After. If Redis cannot count, requests are let through and that is logged (the plugin's
 * `skipOnError` is off so the failure reaches this hook): an outage of the limiter must not take
 * the API down with it.
 */
export const rateLimits = fp<{ redis: RedisClient; keys: RedisKeys; config: Config }>(
  async (app, { redis, keys, config }) => {
    const max: Record<Scope, number> = {
      auth: config.RATE_LIMIT_AUTH_MAX,
      user: config.RATE_LIMIT_MAX,
      anonymous: config.RATE_LIMIT_ANONYMOUS_MAX,
      'app-address': config.APP_RATE_LIMIT_ADDRESS_MAX,
      'app-key': config.APP_RATE_LIMIT_MAX,
    };
    await app.register(fastifyRateLimit, {
      // The hooks below decide which requests count; the plugin only keeps the counters.
      global: false,
      redis,
      nameSpace: keys.rateLimit,
      timeWindow: config.RATE_LIMIT_WINDOW_SECONDS * 1000,
      keyGenerator: (request) => {
        const { scope, subject } = subjectOf(request)!;
        return `${scope}:${subject}`;
      },
      max: (request) => max[subjectOf(request)!.scope],
      skipOnError: false,
    });
    const count = app.createRateLimit();
    const warnUnavailable = rateLimitedLog(app.log, 'warn');

    /** Counts `units` requests for the caller; throws the 429 past the limit. */
    const charge = async (request: FastifyRequest, reply: FastifyReply, units: number) => {
      if (units <= 0 || !subjectOf(request)) return;
      let counts: Awaited<ReturnType<typeof count>>[];
      try {
        // The plugin counts one request per call. The calls of one charge name one key, so ioredis
        // sends them down one connection in order: the last answer is the count after all of them.
        counts = units === 1 ? [await count(request)] : await Promise.all(Array.from({ length: units }, () => count(request)));
      } catch (error) {
        warnUnavailable({ err: error }, 'rate limiter unavailable; request allowed');
        return;
      }
      const counted = counts[counts.length - 1]!;
      if (counted.isAllowed) return;
      const resetAt = Math.ceil((Date.now() + counted.ttl) / 1000);
      reply.header('X-RateLimit-Limit', counted.max);
      reply.header('X-RateLimit-Remaining', counted.remaining);
      reply.header('X-RateLimit-Reset', resetAt);
      if (counted.isExceeded) {
        throw rateLimited(
          `Rate limit of ${counted.max} requests per ${config.RATE_LIMIT_WINDOW_SECONDS}s exceeded; retry in ${counted.ttlInSeconds}s`,
          counted.ttlInSeconds,
        );
      }
    };

    app.decorate('chargeRateLimit', (request: FastifyRequest, reply: FastifyReply) => charge(request, reply, 1));
    // Every request counts once on arrival, before its body is read…
    app.addHook('onRequest', async (request, reply) => charge(request, reply, 1));
    // …and a request worth more (rateLimitUnits) is charged the rest once its body is valid, before it does anything.
    app.addHook('preHandler', async (request, reply) => {
      const units = request.routeOptions.config.rateLimitUnits;
      if (units) await charge(request, reply, units(request) - 1);
    });
  },
  { name: 'rate-limits', dependencies: ['authentication'] },
);
