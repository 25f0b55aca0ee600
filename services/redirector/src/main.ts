import type { RedisClient } from '@deeplink/core/redis/client';
import { ConfigError, loadConfig, type Config } from '@deeplink/core/config';
import { createDatabase } from '@deeplink/core/db/client';
import { createRedis } from '@deeplink/core/redis/client';
import { createRedirector } from './app.js';
import { createLogger, rateLimitedLog } from './logger.js';
import { uwsImplementation } from './native-check.js';

/** Past this, shutdown gives up waiting and exits non-zero. */
const SHUTDOWN_TIMEOUT_MS = 20_000;

/** Start-up failures are written to stderr whatever LOG_LEVEL says. */
function die(msg: string, fields: Record<string, unknown> = {}): never {
  process.stderr.write(`${JSON.stringify({ level: 'fatal', time: new Date().toISOString(), service: 'redirector', msg, ...fields })}\n`);
  process.exit(1);
}

function configOrDie(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) die(error.message);
    throw error;
  }
}

const config = configOrDie();
const logger = createLogger(config.LOG_LEVEL);

const implementation = uwsImplementation();
if (implementation === 'fallback' && !config.ALLOW_UWS_FALLBACK) {
  die('uWebSockets.js native addon did not load; refusing to run on its slow JS fallback (ALLOW_UWS_FALLBACK=1 allows it)', {
    uws: implementation,
  });
}
(implementation === 'native' ? logger.info : logger.warn)('uWebSockets.js loaded', { uws: implementation });

const redisOptions = (name: string) => ({ connectionName: `deeplink-redirector-${name}` });
// Lookups fail fast while Redis is away (PostgreSQL answers instead) rather than queueing.
const redis = createRedis(config.REDIS_URL, { ...redisOptions('cache'), enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 500 });
const subscriber = createRedis(config.REDIS_URL, redisOptions('invalidations'));
// BullMQ needs maxRetriesPerRequest: null; no offline queue so an add fails (and is retried) instead of hanging.
const queueConnection = createRedis(config.REDIS_URL, {
  ...redisOptions('queue'),
  maxRetriesPerRequest: null,
  enableOfflineQueue: false,
  enableAutoPipelining: false,
});
const warnRedis = rateLimitedLog(logger.warn);
for (const connection of [redis, subscriber, queueConnection]) {
  connection.on('error', (error: Error) => warnRedis('redis connection error', { error }));
}
const sql = createDatabase(config.DATABASE_URL, { max: config.DATABASE_POOL_MAX, applicationName: 'deeplink-redirector' });

/** Resolves when the connection is ready, or after `ms` (it keeps reconnecting in the background). */
function ready(connection: RedisClient, ms: number): Promise<void> {
  if (connection.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      connection.off('ready', done);
      resolve();
    }
    connection.on('ready', done);
  });
}

const redirector = createRedirector({ config, logger, sql, redis, subscriber, queueConnection });
// Give Redis a moment before taking traffic, so a fresh instance does not send its first lookups to
// PostgreSQL; start anyway when Redis is down, the redirect works without it.
await ready(redis, 2_000);
try {
  const port = await redirector.listen(config.REDIRECTOR_PORT, config.REDIRECTOR_HOST);
  logger.info('listening', { host: config.REDIRECTOR_HOST, port, uws: implementation });
} catch (error) {
  die('cannot listen', { error: (error as Error).message });
}

async function closeRedis(connection: RedisClient): Promise<void> {
  await Promise.race([connection.quit(), new Promise((resolve) => setTimeout(resolve, 1_000))]).catch(() => {});
  connection.disconnect();
}

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info('shutting down', { signal });
  setTimeout(() => {
    logger.error('shutdown timed out');
    process.exit(1);
  }, SHUTDOWN_TIMEOUT_MS).unref();
  await redirector.close();
  const { clicksFlushed, clicksDropped } = redirector.metrics;
  await Promise.all([closeRedis(queueConnection), closeRedis(subscriber), closeRedis(redis)]);
  await sql.end({ timeout: 5 });
  logger.info('stopped', { clicksFlushed, clicksDropped });
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('unhandledRejection', (error) => logger.error('unhandled rejection', { error }));
