import { type Config, fastifyTrustProxy, type RedisKeys, redisKeys } from '@deeplink/core';
import {
  analyticsRepository,
  analyticsWithReplica,
  apiKeysRepository,
  appsRepository,
  domainsRepository,
  installClicksRepository,
  linkImportsRepository,
  linksRepository,
  type LinksRepository,
  type Sql,
  usersRepository,
  webhooksRepository,
} from '@deeplink/core/db';
import { configuredSecretBox, webhookEventQueue } from '@deeplink/core/webhooks';
import type { RedisClient } from '@deeplink/core/redis';
import { domainChecks, txtLookup } from '@deeplink/core/domains';
import { dependencyReadiness, type Logger } from '@deeplink/core/runtime';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { Gauge, Registry } from 'prom-client';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { analyticsService, type AnalyticsService } from './domain/analytics-service.js';
import { authService, type AuthService } from './domain/auth-service.js';
import { accountCache } from './domain/accounts.js';
import { linksService, type LinksService } from './domain/links-service.js';
import { appsService, type AppsService } from './domain/apps-service.js';
import { domainRecords } from './domain/domain-records.js';
import { domainsService, type DomainsService } from './domain/domains-service.js';
import { credentialFailures } from './domain/credential-failures.js';
import { authentication } from './plugins/authentication.js';
import { dashboard } from './plugins/dashboard.js';
import { answerClientError, answerRouterError, errorHandling, sendNotFound } from './plugins/error-handler.js';
import { openApi } from './plugins/openapi.js';
import { rateLimits } from './plugins/rate-limit.js';
import { OneLinePerRequest } from './plugins/request-log.js';
import { requestMetrics } from './plugins/request-metrics.js';
import { refuseUnknownQueryParameters } from './plugins/strict-query.js';
import { analyticsRoutes } from './routes/analytics-routes.js';
import { accountRoutes, publicAuthRoutes } from './routes/auth-routes.js';
import { healthRoutes } from './routes/health-routes.js';
import { linkRoutes } from './routes/link-routes.js';
import { qrRoutes } from './routes/qr-routes.js';
import { concurrencyLimit, type ConcurrencyLimit } from './domain/concurrency-limit.js';
import { exportBudget } from './domain/export-budget.js';
import { qrRenderPool, type QrRenderPool } from './domain/qr-render-pool.js';
import { qrLogoSource, type QrLogoSource } from './domain/qr-logo-source.js';
import { appDomainRoutes } from './routes/app-domain-routes.js';
import { appOpenEvents } from './domain/app-open-events.js';
import { appOpenService, type AppOpenService } from './domain/app-open-service.js';
import { appInstallService, type AppInstallService } from './domain/app-install-service.js';
import { appSdkRoutes } from './routes/app-sdk-routes.js';
import { linkImportService, type LinkImportService } from './domain/link-import-service.js';
import { importRoutes } from './routes/import-routes.js';
import { firebaseRestService } from './domain/firebase-rest-service.js';
import { firebaseRestRoutes } from './routes/firebase-rest-routes.js';
import { liveFeed, type LiveFeed } from './domain/live-feed.js';
import { liveStreamSlots } from './domain/live-stream-slots.js';
import { liveRoutes } from './routes/live-routes.js';
import { linkEvents } from './domain/link-events.js';
import { webhooksService, type WebhooksService } from './domain/webhooks-service.js';
import { webhookRoutes } from './routes/webhook-routes.js';

export interface ApiDeps {
  config: Config;
  sql: Sql;
  /**
   * A pool on the read replica (DATABASE_READ_URL) for the analytics and export queries; without
   * it they read `sql`. Link ownership is always checked on the primary, so a link just created
   * is found even before the replica has it.
   */
  readSql?: Sql;
  /**
   * Pools for the exports alone (DATABASE_EXPORT_POOL_MAX connections each, on the primary and on
   * the replica), so a download its client reads slowly never holds a connection the rest of the
   * API needs. Without them (tests that do not export) exports read `sql` and `readSql`.
   */
  exportSql?: Sql;
  exportReadSql?: Sql;
  redis: RedisClient;
  /**
   * A connection for subscriptions only (token revocations, see accounts.ts, and the live click
   * streams, see live-feed.ts), opened by the caller, who closes it after the app.
   */
  subscriber: RedisClient;
  /** The service logger (main.ts); tests usually pass none, which logs nothing. */
  logger?: Logger;
  /** Where the request metrics (and the open live streams) go; a registry of its own when not given. */
  registry?: Registry;
  /** The clock of the install match (its token expiry and fingerprint window); tests set it. */
  now?: () => number;
  /** The dashboard's static build, served at the origin root; without one (tests) `/` says how to build it. */
  dashboardDir?: string;
}

/** 1 MiB: larger bodies get 413 before they are parsed. */
export const BODY_LIMIT = 1024 * 1024;

/** PNG QR codes waiting for a render thread; past it a request is answered 429 at once. */
export const QR_RENDER_QUEUE = 32;
/** PNG QR codes one account may have drawing or waiting at once. */
export const QR_PNG_PER_USER = 2;
/** Imports reading their file at once in one API process, whoever asks (one per account). */
export const IMPORTS_RUNNING = 4;
/** Live click streams one account may have open at once, on all API instances together. */
export const LIVE_STREAMS_PER_USER = 5;

/** Builds the API without listening, so tests can inject requests or listen on a spare port. */
export async function buildApi(deps: ApiDeps): Promise<FastifyInstance> {
  const { config, sql, redis } = deps;
  const app = Fastify({
    // Without a logger from main.ts (tests) Fastify logs nothing.
    loggerInstance: deps.logger as FastifyBaseLogger | undefined,
    bodyLimit: BODY_LIMIT,
    trustProxy: fastifyTrustProxy(config.TRUST_PROXY),
    logController: new OneLinePerRequest(),
    // Ids are opaque strings; Fastify must not route /links/abc/ to a different handler.
    routerOptions: { ignoreTrailingSlash: true },
    // Errors the router and the HTTP parser meet before any hook: answered with the envelope too.
    frameworkErrors: (error, request, reply) => void answerRouterError(app, error, request, reply),
    clientErrorHandler: answerClientError,
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // The API speaks JSON only: any other body is refused with 415 rather than half-parsed.
  app.removeContentTypeParser('text/plain');

  const keys = redisKeys(config.REDIS_PREFIX);
  const users = usersRepository(sql);
  const accounts = accountCache({ users, redis, subscriber: deps.subscriber, keys, log: app.log });
  app.addHook('onClose', () => accounts.close());
  const failures = credentialFailures(redis, keys, { max: config.RATE_LIMIT_AUTH_MAX, windowSeconds: config.RATE_LIMIT_WINDOW_SECONDS });
  const auth = authService({
    users,
    apiKeys: apiKeysRepository(sql),
    accounts,
    jwtSecret: config.JWT_SECRET,
    jwtTtlSeconds: config.JWT_TTL_SECONDS,
    failures,
  });
  const domainRows = domainsRepository(sql);
  const webhookQueue = webhookEventQueue(redis, config.QUEUE_PREFIX);
  app.addHook('onClose', () => webhookQueue.close());
  const webhooks = webhooksService({ webhooks: webhooksRepository(sql), box: configuredSecretBox(config), queue: webhookQueue });
  const links = linksService({
    links: linksRepository(sql),
    domains: domainRows,
    redis,
    keys,
    shortUrlBase: config.SHORT_URL_BASE,
    maxDestinationBytes: config.MAX_DESTINATION_BYTES,
    log: app.log,
    events: linkEvents({ queue: webhookQueue, log: app.log }),
  });
  const records = domainRecords({ sql, domains: domainRows, redis, keys, log: app.log });
  const apps = appsService({ apps: appsRepository(sql), links: linksRepository(sql), records, redis, keys, log: app.log });
  const openEvents = appOpenEvents({ redis, queuePrefix: config.QUEUE_PREFIX });
  app.addHook('onClose', () => openEvents.close());
  const opens = appOpenService({
    apps: appsRepository(sql),
    links: linksRepository(sql),
    events: openEvents,
    shortUrlBase: config.SHORT_URL_BASE,
  });
  const installs = appInstallService({
    installClicks: installClicksRepository(sql),
    links: linksRepository(sql),
    events: openEvents,
    shortUrlBase: config.SHORT_URL_BASE,
    visitorSalt: config.VISITOR_SALT,
    failedTokens: installTokenBudgets(redis, keys, config),
    now: deps.now,
  });
  const lookupTxt = txtLookup(config.DNS_SERVERS);
  const domains = domainsService({
    domains: domainRows,
    records,
    redis,
    keys,
    lookupTxt,
    shortUrlBase: config.SHORT_URL_BASE,
    log: app.log,
    checks: domainChecks({ sql, redis, keys, lookupTxt, graceHours: config.DOMAIN_VERIFICATION_GRACE_HOURS, log: app.log }),
  });
  /** Analytics reads on `primary`, or on `replica` when there is one, the primary answering when it cannot. */
  const analyticsReads = (primary: Sql, replica: Sql | undefined) => {
    if (!replica) return analyticsRepository(primary);
    const reads = analyticsWithReplica(analyticsRepository(primary), analyticsRepository(replica), {
      readTimeoutMs: config.DATABASE_READ_TIMEOUT_MS,
      probe: () => replica`SELECT 1`,
      onFallback: (error) => app.log.warn({ err: error }, 'read replica unavailable: analytics read from the primary'),
      onRecovered: () => app.log.info('read replica answers again: analytics read from it'),
    });
    app.addHook('onClose', async () => reads.close());
    return reads;
  };
  const analyticsRows = analyticsReads(sql, deps.readSql);
  const analytics = analyticsService({
    links: linksRepository(sql),
    shortUrlBase: config.SHORT_URL_BASE,
    analytics: analyticsRows,
    exportAnalytics: analyticsReads(deps.exportSql ?? sql, deps.exportReadSql ?? deps.readSql),
    exportBudget: exportBudget({
      perUser: config.EXPORTS_PER_USER,
      total: config.DATABASE_EXPORT_POOL_MAX,
      idleMs: config.EXPORT_IDLE_TIMEOUT_SECONDS * 1000,
      totalMs: config.EXPORT_TIMEOUT_SECONDS * 1000,
    }),
  });

  const imports = linkImportService({
    imports: linkImportsRepository(sql),
    links: linksRepository(sql),
    linksService: links,
    running: concurrencyLimit({ what: 'imports', perUser: 1, total: IMPORTS_RUNNING, retryAfterSeconds: 30 }),
    log: app.log,
  });

  const firebase = firebaseRestService({
    sql,
    redis,
    keys,
    links: linksRepository(sql),
    domains: domainRows,
    analytics: analyticsRows,
    shortUrlBase: config.SHORT_URL_BASE,
    maxDestinationBytes: config.MAX_DESTINATION_BYTES,
    log: app.log,
    now: deps.now,
  });

  const live = liveFeed({
    redis,
    subscriber: deps.subscriber,
    keys,
    // A place not renewed for three pings (its instance is gone) frees itself.
    slots: liveStreamSlots(redis, keys, { perUser: LIVE_STREAMS_PER_USER, ttlMs: 3 * config.LIVE_PING_INTERVAL_MS }),
    pingIntervalMs: config.LIVE_PING_INTERVAL_MS,
    log: app.log,
  });
  // Before the server stops taking connections and waits for the open ones: streams never end on their own.
  app.addHook('preClose', () => live.close());

  const renders = qrRenderPool({ threads: config.QR_RENDER_THREADS, maxQueue: QR_RENDER_QUEUE });
  app.addHook('onClose', () => renders.close());
  const pngLimit = concurrencyLimit({ what: 'PNG QR codes', perUser: QR_PNG_PER_USER, retryAfterSeconds: 1 });
  const logos = qrLogoSource({ allowPrivate: config.QR_LOGO_ALLOW_PRIVATE });

  // Order matters where hooks do: credentials are read before the rate limit picks its rule.
  await app.register(errorHandling);
  await app.register(authentication, { auth, failures });
  await app.register(rateLimits, { redis, keys, config });
  const registry = deps.registry ?? new Registry();
  await app.register(requestMetrics, { registry });
  new Gauge({
    name: 'api_live_streams_open',
    help: 'Live click streams (Server-Sent Events) open on this instance.',
    registers: [registry],
    collect() {
      this.set(live.streams);
    },
  });
  await app.register(openApi, { serverUrl: `http://${config.API_HOST}:${config.API_PORT}`, bodyLimit: BODY_LIMIT });
  await app.register(healthRoutes, { readiness: dependencyReadiness({ redis, sql }) });
  await app.register(apiRoutes, {
    prefix: '/api',
    auth,
    links,
    analytics,
    apps,
    opens,
    installs,
    domains,
    imports,
    qr: { links, renders, pngLimit, logos },
    live: { live, links: linksRepository(sql) },
    webhooks,
  });
  // Firebase Dynamic Links' REST API at its own paths, so its clients change only host and key.
  await app.register(firebaseRestRoutes, { prefix: '/v1', firebase });
  await app.register(dashboard, { root: deps.dashboardDir });
  return app;
}

/**
 * Failed install-token lookups allowed per window: per address as many as failed credentials
 * (RATE_LIMIT_AUTH_MAX), per app key a tenth of the key's calls (APP_RATE_LIMIT_MAX / 10). A token
 * has 128 random bits, so nobody finds one by guessing; the budgets keep anyone from trying at the
 * database's expense.
 */
export const installTokenBudgets = (redis: RedisClient, keys: RedisKeys, config: Config) => ({
  perAddress: credentialFailures(redis, keys, {
    max: config.RATE_LIMIT_AUTH_MAX,
    windowSeconds: config.RATE_LIMIT_WINDOW_SECONDS,
    what: 'unknown install tokens from this address',
  }),
  perKey: credentialFailures(redis, keys, {
    max: Math.max(1, Math.floor(config.APP_RATE_LIMIT_MAX / 10)),
    windowSeconds: config.RATE_LIMIT_WINDOW_SECONDS,
    what: 'unknown install tokens with this app key',
  }),
});

type QrRouteDeps = { links: LinksService; renders: QrRenderPool; pngLimit: ConcurrencyLimit; logos: QrLogoSource };
type LiveRouteDeps = { live: LiveFeed; links: LinksRepository };

/** Everything under /api. */
async function apiRoutes(
  api: FastifyInstance,
  {
    auth,
    links,
    analytics,
    apps,
    opens,
    installs,
    domains,
    imports,
    qr,
    live,
    webhooks,
  }: {
    auth: AuthService;
    links: LinksService;
    analytics: AnalyticsService;
    apps: AppsService;
    opens: AppOpenService;
    installs: AppInstallService;
    domains: DomainsService;
    imports: LinkImportService;
    qr: QrRouteDeps;
    live: LiveRouteDeps;
    webhooks: WebhooksService;
  },
): Promise<void> {
  api.addHook('onRoute', refuseUnknownQueryParameters);
  await api.register(publicAuthRoutes, { auth });
  await api.register(accountRoutes, { auth });
  await api.register(linkRoutes, { links });
  await api.register(qrRoutes, qr);
  await api.register(analyticsRoutes, { analytics });
  await api.register(liveRoutes, live);
  await api.register(appDomainRoutes, { apps, domains });
  await api.register(appSdkRoutes, { opens, installs });
  await api.register(importRoutes, { imports });
  await api.register(webhookRoutes, { webhooks });
  // Unknown API paths: the 404 envelope from a route of the API's own, so they pass its hooks
  // (credentials, rate limit, metrics) like any API request, with or without the dashboard.
  api.all('/*', { schema: { hide: true } }, sendNotFound);
}
