import { createDatabase } from '@deeplink/core/db';
import {
  checkQueueDurability,
  closeServer,
  connectRedis,
  createLogger,
  createMetricsRegistry,
  createOpsServer,
  createRedisOutageLog,
  gracefulShutdown,
  listenOn,
  loadConfigOrExit,
  untilReady,
  whenReady,
} from '@deeplink/core/runtime';
import { createRedirector } from './app.js';
import { checkSpoolWritable } from './click-spool.js';
import { uws, uwsImplementation } from './uws.js';

const SERVICE = 'redirector';
const config = loadConfigOrExit(SERVICE);
const logger = createLogger(SERVICE, config.LOG_LEVEL);

const implementation = uwsImplementation();
const build = { uws: implementation, uwsBuild: uws.build, node: process.versions.node, ...(uws.reason && { reason: uws.reason }) };
if (implementation === 'fallback' && !config.ALLOW_UWS_FALLBACK) {
  logger.fatal(build, 'uWebSockets.js native addon did not load; refusing to run on its slow JS fallback (ALLOW_UWS_FALLBACK=1 allows it)');
  process.exit(1);
}
logger[implementation === 'native' ? 'info' : 'warn'](build, 'uWebSockets.js loaded');

// A spool that cannot be written would lose every click of the next Redis outage: say so now.
try {
  checkSpoolWritable(config.CLICK_SPOOL_DIR);
} catch (error) {
  logger.fatal(
    { err: error, dir: config.CLICK_SPOOL_DIR },
    'CLICK_SPOOL_DIR cannot be written; refusing to start (it must be a writable directory on local disk)',
  );
  process.exit(1);
}

const outage = createRedisOutageLog(logger);
const redis = connectRedis(config.REDIS_URL, 'cache', { service: SERVICE, use: 'cache', outage });
const subscriber = connectRedis(config.REDIS_URL, 'general', { service: SERVICE, use: 'invalidations', outage });
const queueConnection = connectRedis(config.REDIS_URL, 'queueProducer', { service: SERVICE, use: 'queue', outage });
const sql = createDatabase(config.DATABASE_URL, { max: config.DATABASE_POOL_MAX, applicationName: 'deeplink-redirector' });

const redirector = createRedirector({ config, logger, sql, redis, subscriber, queueConnection });
const registry = createMetricsRegistry(SERVICE);
redirector.metrics.register(registry);
const ops = createOpsServer({ registry, readiness: redirector.readiness, logger });

const { shutdown, handleSignals, handleProcessErrors } = gracefulShutdown(
  {
    stopAccepting: () => redirector.stopAccepting(),
    drain: () => redirector.drain(),
    closeConnections: async () => {
      const { clicksFlushed, clicksDropped } = redirector.metrics;
      logger.info({ clicksFlushed, clicksDropped }, 'clicks flushed');
      await Promise.all([
        closeServer(ops),
        ...[queueConnection, subscriber, redis].map((connection) => connection.quit().catch(() => connection.disconnect())),
        sql.end({ timeout: 5 }),
      ]);
    },
  },
  { logger },
);
handleSignals();
handleProcessErrors();

// Give Redis a moment before taking traffic, so a fresh instance does not send its first lookups to
// PostgreSQL; start anyway when Redis is down, the redirect works without it (clicks are spooled).
await untilReady(redis, 2_000);
whenReady(redis, () =>
  checkQueueDurability(redis, { config, logger }).catch((error: unknown) => {
    logger.fatal({ err: error }, 'refusing to run on this Redis');
    void shutdown('Redis not durable', 1);
  }),
);
try {
  const port = await redirector.listen(config.REDIRECTOR_PORT, config.REDIRECTOR_HOST);
  const metricsPort = await listenOn(ops, config.REDIRECTOR_METRICS_PORT, config.METRICS_HOST);
  logger.info({ host: config.REDIRECTOR_HOST, port, metricsPort, uws: implementation }, 'listening');
} catch (error) {
  logger.fatal({ err: error }, 'cannot listen');
  await shutdown('start-up failure', 1);
}
