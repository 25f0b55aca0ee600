import {
  analyticsRepository, analyticsWithReplica, apiKeysRepository, linksRepository, redisKeys, usersRepository, type Config, type Sql,
} from '@deeplink/core';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from '@deeplink/core/runtime/logger';
import { dependencyReadiness } from '@deeplink/core/runtime/readiness';
import { fastifyTrustProxy } from '@deeplink/core/trust-proxy';
import { Registry } from 'prom-client';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { RedisClient } from '@deeplink/core';
import { analyticsService } from './domain/analytics-service.js';
import { authService } from './domain/auth-service.js';
import { tokenVersions } from './domain/token-versions.js';
import { linksService } from './domain/links-service.js';
import { registerAuthentication } from './plugins/authentication.js';
import { registerErrorHandling } from './plugins/error-handler.js';
import { registerOpenApi } from './plugins/openapi.js';
import { registerRequestMetrics } from './plugins/request-metrics.js';
import { credentialFailures, rateLimiter, type RateLimitRule } from './plugins/rate-limit.js';
import { analyticsRoutes } from './routes/analytics-routes.js';
import { accountRoutes, publicAuthRoutes } from './routes/auth-routes.js';
import { registerHealthRoutes } from './routes/health-routes.js';
import { linkRoutes } from './routes/link-routes.js';

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

export interface ApiDeps {
  config: Config;
  sql: Sql;
  /**
   * A pool on the read replica (DATABASE_READ_URL) for the analytics and export queries; without
   * it they read `sql`. Link ownership is always checked on the primary, so a link just created
   * is found even before the replica has it.
   */
  readSql?: Sql;
  redis: RedisClient;
  /** The service logger (main.ts); tests usually pass none, which logs nothing. */
  logger?: Logger;
  /** Where the request metrics go; a registry of its own when not given. */
  registry?: Registry;
}

/** 1 MiB: larger bodies get 413 before they are parsed. */
export const BODY_LIMIT = 1024 * 1024;

/** Builds the API without listening, so tests can inject requests or listen on a spare port. */
export async function buildApi(deps: ApiDeps): Promise<FastifyInstance> {
  const { config, sql, redis } = deps;
  const app = Fastify({
    // Without a logger from main.ts (tests) Fastify logs nothing.
    loggerInstance: deps.logger as FastifyBaseLogger | undefined,
    bodyLimit: BODY_LIMIT,
    trustProxy: fastifyTrustProxy(config.TRUST_PROXY),
    // Ids are opaque strings; Fastify must not route /links/abc/ to a different handler.
    routerOptions: { ignoreTrailingSlash: true },
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // The API speaks JSON only: any other body is refused with 415 rather than half-parsed.
  app.removeContentTypeParser('text/plain');
  registerErrorHandling(app);

  const keys = redisKeys(config.REDIS_PREFIX);
  const users = usersRepository(sql);
  const auth = authService({
    users,
    apiKeys: apiKeysRepository(sql),
    tokenVersions: tokenVersions({ users, redis, keys }),
    jwtSecret: config.JWT_SECRET,
    jwtTtlSeconds: config.JWT_TTL_SECONDS,
  });
  const links = linksService({ links: linksRepository(sql), redis, keys, shortUrlBase: config.SHORT_URL_BASE, maxDestinationBytes: config.MAX_DESTINATION_BYTES, log: app.log });
  const analytics = analyticsService({
    links: linksRepository(sql),
    shortUrlBase: config.SHORT_URL_BASE,
    analytics: deps.readSql
      ? analyticsWithReplica(analyticsRepository(sql), analyticsRepository(deps.readSql), {
          onFallback: (error) => app.log.warn({ err: error }, 'read replica unavailable: analytics read from the primary'),
        })
      : analyticsRepository(sql),
  });

  registerAuthentication(app, auth, credentialFailures(redis, keys, { max: config.RATE_LIMIT_AUTH_MAX, windowSeconds: config.RATE_LIMIT_WINDOW_SECONDS }));
  registerRateLimits(app, rateLimiter(redis, keys), config);
  await registerOpenApi(app, `http://${config.API_HOST}:${config.API_PORT}`);
  registerHealthRoutes(app, dependencyReadiness({ redis, sql }));
  registerRequestMetrics(app, deps.registry ?? new Registry());

  await app.register(
    async (api) => {
      await api.register(publicAuthRoutes, { auth });
      await api.register(accountRoutes, { auth });
      await api.register(linkRoutes, { links });
      await api.register(analyticsRoutes, { analytics });
    },
    { prefix: '/api' },
  );
  return app;
}

function registerRateLimits(app: FastifyInstance, limit: ReturnType<typeof rateLimiter>, config: Config): void {
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
}
