import { join } from 'node:path';
import { usesDevelopmentSecrets } from '@deeplink/core';
import { createDatabase, migrate } from '@deeplink/core/db';
import {
  closeServer,
  connectRedis,
  createLogger,
  createMetricsRegistry,
  createOpsServer,
  createRedisOutageLog,
  dependencyReadiness,
  gracefulShutdown,
  isDatabaseUnavailable,
  listenOn,
  loadConfigOrExit,
  retryUntil,
} from '@deeplink/core/runtime';
import { buildApi } from './app.js';

const SERVICE = 'api';
const config = loadConfigOrExit(SERVICE);
const logger = createLogger(SERVICE, config.LOG_LEVEL);
if (usesDevelopmentSecrets(config)) logger.warn('JWT_SECRET or VISITOR_SALT is not set: using development defaults');

const sql = createDatabase(config.DATABASE_URL, { max: config.DATABASE_POOL_MAX, applicationName: 'deeplink-api' });
// A replica that does not answer must not hold a report up for postgres.js' default 30 s before the primary answers it.
const readSql = config.DATABASE_READ_URL
  ? createDatabase(config.DATABASE_READ_URL, {
      max: config.DATABASE_POOL_MAX,
      applicationName: 'deeplink-api-read',
      connectTimeoutSeconds: 2,
    })
  : undefined;
// Exports read through pools of their own: a download read slowly holds one of these, never one of the above.
const exportSql = createDatabase(config.DATABASE_URL, { max: config.DATABASE_EXPORT_POOL_MAX, applicationName: 'deeplink-api-export' });
const exportReadSql = config.DATABASE_READ_URL
  ? createDatabase(config.DATABASE_READ_URL, {
      max: config.DATABASE_EXPORT_POOL_MAX,
      applicationName: 'deeplink-api-export-read',
      connectTimeoutSeconds: 2,
    })
  : undefined;
// Fail fast rather than queue commands while Redis is away: the API degrades instead of hanging.
const outage = createRedisOutageLog(logger);
const redis = connectRedis(config.REDIS_URL, 'cache', { service: SERVICE, use: 'cache', outage, options: { enableAutoPipelining: true } });
const subscriber = connectRedis(config.REDIS_URL, 'general', { service: SERVICE, use: 'invalidations', outage });
const registry = createMetricsRegistry(SERVICE);
const ops = createOpsServer({ registry, readiness: dependencyReadiness({ redis, sql }), logger });

await retryUntil(() => migrate(sql, (line) => logger.info(line)), {
  what: 'migrating the database',
  logger,
  retryIf: isDatabaseUnavailable,
});
// services/api/src/main.ts and services/api/dist/main.js sit at the same depth: both find the dashboard's build.
const dashboardDir = join(import.meta.dirname, '../../dashboard/dist');
const app = await buildApi({ config, sql, readSql, exportSql, exportReadSql, redis, subscriber, logger, registry, dashboardDir });

const { handleSignals, handleProcessErrors } = gracefulShutdown(
  {
    // Stops accepting, waits for in-flight requests, closes idle keep-alive connections.
    drain: () => app.close(),
    closeConnections: async () => {
      await Promise.all([
        closeServer(ops),
        ...[redis, subscriber].map((connection) => connection.quit().catch(() => connection.disconnect())),
        ...[sql, readSql, exportSql, exportReadSql].map((pool) => pool?.end({ timeout: 5 })),
      ]);
    },
  },
  { logger },
);
handleSignals();
handleProcessErrors();

await app.listen({ host: config.API_HOST, port: config.API_PORT });
const metricsPort = await listenOn(ops, config.API_METRICS_PORT, config.METRICS_HOST);
logger.info({ host: config.API_HOST, port: config.API_PORT, metricsPort }, 'listening');
