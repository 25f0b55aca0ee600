import { ConfigError, createDatabase, createRedis, loadConfig, migrate, usesDevelopmentSecrets } from '@deeplink/core';
import { buildApi } from './app.js';
import { loggerOptions } from './logger-options.js';

const SHUTDOWN_TIMEOUT_MS = 10_000;

let config;
try {
  config = loadConfig();
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
}

const logger = loggerOptions(config);
const sql = createDatabase(config.DATABASE_URL, { max: config.DATABASE_POOL_MAX, applicationName: 'deeplink-api' });
// A replica that does not answer must not hold a report up for postgres.js' default 30 s before the primary answers it.
const readSql = config.DATABASE_READ_URL
  ? createDatabase(config.DATABASE_READ_URL, { max: config.DATABASE_POOL_MAX, applicationName: 'deeplink-api-read', connectTimeoutSeconds: 2 })
  : undefined;
// Fail fast rather than queue commands while Redis is away; the API degrades instead of hanging.
const redis = createRedis(config.REDIS_URL, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
await new Promise<void>((resolve, reject) => {
  redis.once('ready', resolve);
  redis.once('error', reject);
}).catch((error) => {
  console.error(`cannot reach Redis at ${config.REDIS_URL}: ${error.message}`);
  process.exit(1);
});
redis.on('error', () => {}); // reconnects on its own; requests report the outage

await migrate(sql);
const app = await buildApi({ config, sql, readSql, redis, logger });
if (usesDevelopmentSecrets(config)) app.log.warn('JWT_SECRET or VISITOR_SALT is not set: using development defaults');

let closing = false;
async function shutdown(signal: string): Promise<void> {
  if (closing) return;
  closing = true;
  app.log.info({ signal }, 'shutting down');
  const timer = setTimeout(() => {
    app.log.error('shutdown timed out; exiting');
    process.exit(1);
  }, SHUTDOWN_TIMEOUT_MS).unref();
  await app.close(); // stops accepting, waits for in-flight requests
  await redis.quit().catch(() => redis.disconnect());
  await Promise.all([sql.end({ timeout: 5 }), readSql?.end({ timeout: 5 })]);
  clearTimeout(timer);
  process.exit(0);
}
process.once('SIGTERM', () => void shutdown('SIGTERM'));
process.once('SIGINT', () => void shutdown('SIGINT'));

await app.listen({ host: config.API_HOST, port: config.API_PORT });
