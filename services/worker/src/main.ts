import type { AddressInfo } from 'node:net';
import {
  ConfigError,
  createDatabase,
  createRedis,
  loadConfig,
  migrate,
  usesDevelopmentSecrets,
  type Config,
} from '@deeplink/core';
import { createWorker, type ClickWorker } from './app.js';
import { createHealthServer } from './health-server.js';
import { createLogger } from './logger.js';

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
}

const log = createLogger(config.LOG_LEVEL);
if (usesDevelopmentSecrets(config)) log.warn('JWT_SECRET or VISITOR_SALT is not set: using development defaults');

const sql = createDatabase(config.DATABASE_URL, { max: config.DATABASE_POOL_MAX, applicationName: 'deeplink-worker' });
const redis = createRedis(config.REDIS_URL);
// ioredis reconnects by itself; say so once per outage rather than on every attempt.
let redisDown = false;
redis.on('error', (error) => {
  if (!redisDown) log.warn('Redis unreachable, reconnecting', { err: error });
  redisDown = true;
});
redis.on('ready', () => {
  if (redisDown) log.info('Redis reachable again');
  redisDown = false;
});

try {
  await migrate(sql, (line) => log.info(line));
} catch (error) {
  log.error('cannot migrate the database', { err: error });
  process.exit(1);
}
let app: ClickWorker;
try {
  app = await createWorker({ config, sql, redis, log });
} catch (error) {
  log.error('cannot start the worker', { err: error });
  redis.disconnect();
  await sql.end({ timeout: 5 });
  process.exit(1);
}
const health = createHealthServer({ sql, redis });
health.once('error', (error) => {
  log.error('cannot serve health checks', { err: error, port: config.WORKER_PORT });
  void shutdown('startup failure', 1);
});
health.listen(config.WORKER_PORT, config.WORKER_HOST, () => {
  const { port } = health.address() as AddressInfo;
  log.info('worker started', { concurrency: config.WORKER_CONCURRENCY, healthPort: port });
});

let closing = false;
async function shutdown(reason: string, exitCode = 0): Promise<void> {
  if (closing) return;
  closing = true;
  log.info('shutting down', { reason });
  const timer = setTimeout(() => {
    log.error('shutdown timed out; unfinished batches go back to the queue when their lock expires');
    process.exit(1);
  }, config.WORKER_SHUTDOWN_TIMEOUT_MS).unref();
  health.close();
  await app.close(); // stops taking jobs, waits for the batches in flight, stops the cron tasks
  await redis.quit().catch(() => redis.disconnect());
  await sql.end({ timeout: 5 });
  clearTimeout(timer);
  log.info('stopped');
  process.exit(exitCode);
}
process.once('SIGTERM', () => void shutdown('SIGTERM'));
process.once('SIGINT', () => void shutdown('SIGINT'));
