import { usesDevelopmentSecrets } from '@deeplink/core';
import { createDatabase, migrate } from '@deeplink/core/db';
import {
  checkQueueDurability,
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
  whenReady,
} from '@deeplink/core/runtime';
import { createWorker, type ClickWorker } from './app.js';

const SERVICE = 'worker';
const config = loadConfigOrExit(SERVICE);
const logger = createLogger(SERVICE, config.LOG_LEVEL);
if (usesDevelopmentSecrets(config)) logger.warn('JWT_SECRET or VISITOR_SALT is not set: using development defaults');

const sql = createDatabase(config.DATABASE_URL, { max: config.DATABASE_POOL_MAX, applicationName: 'deeplink-worker' });
const outage = createRedisOutageLog(logger);
const redis = connectRedis(config.REDIS_URL, 'general', { service: SERVICE, use: 'maintenance', outage });
const registry = createMetricsRegistry(SERVICE);
let app: ClickWorker | undefined;
let closing = false;
const readiness = dependencyReadiness({ redis, sql }, { consuming: () => app !== undefined && !closing });
const ops = createOpsServer({ registry, readiness, logger });

const { shutdown, handleSignals, handleProcessErrors } = gracefulShutdown(
  {
    stopAccepting: () => {
      closing = true;
    },
    // Stops taking jobs, waits for the batches in flight, stops the cron tasks, closes the queue.
    // Past the bound, unfinished batches go back to the queue when their lock expires.
    closeQueues: () => app?.close() ?? Promise.resolve(),
    closeConnections: async () => {
      await Promise.all([closeServer(ops), redis.quit().catch(() => redis.disconnect()), sql.end({ timeout: 5 })]);
    },
  },
  { logger, stepTimeoutMs: config.WORKER_SHUTDOWN_TIMEOUT_MS },
);
handleSignals();
handleProcessErrors();

whenReady(redis, () =>
  checkQueueDurability(redis, { config, logger }).catch((error: unknown) => {
    logger.fatal({ err: error }, 'refusing to run on this Redis');
    void shutdown('Redis not durable', 1);
  }),
);

try {
  await retryUntil(() => migrate(sql, (line) => logger.info(line)), {
    what: 'migrating the database',
    logger,
    retryIf: isDatabaseUnavailable,
  });
  app = await createWorker({ config, sql, redis, log: logger, registry, outage });
  const port = await listenOn(ops, config.WORKER_PORT, config.WORKER_HOST);
  logger.info({ concurrency: config.WORKER_CONCURRENCY, healthPort: port, metricsPort: port }, 'worker started');
} catch (error) {
  logger.fatal({ err: error }, 'cannot start the worker');
  await shutdown('start-up failure', 1);
}
