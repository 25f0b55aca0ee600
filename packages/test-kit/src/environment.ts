import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { type Config, loadConfig } from '@deeplink/core';
import { createDatabase, type Sql } from '@deeplink/core/db';
import { createRedis, deleteKeys } from '@deeplink/core/redis';
import { templateDatabase, adminUrl, databaseUrl, redisUrl } from './urls.js';

export interface TestEnvironment {
  /** Config pointing at this file's own database and Redis prefix. */
  config: Config;
  /** The environment variables behind `config`, for starting services as child processes. */
  env: Record<string, string>;
  sql: Sql;
  redis: Redis;
  close(): Promise<void>;
}

/**
 * A private world for one test file: its own database cloned from the migrated template and its
 * own Redis key prefix and queue prefix on the shared Redis. `overrides` are extra env variables.
 */
export async function createTestEnvironment(overrides: Record<string, string> = {}): Promise<TestEnvironment> {
  const id = randomBytes(5).toString('hex');
  const name = `deeplink_test_${id}`;
  const admin = createDatabase(adminUrl(), { max: 1 });
  try {
    await admin.unsafe(`CREATE DATABASE ${name} TEMPLATE ${templateDatabase()}`);
  } finally {
    await admin.end();
  }
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATABASE_URL: databaseUrl(name),
    DATABASE_POOL_MAX: '4',
    REDIS_URL: redisUrl(),
    REDIS_PREFIX: `t${id}:`,
    QUEUE_PREFIX: `tq${id}`,
    // Services a test starts never take the default ports (other tests run beside them).
    API_METRICS_PORT: '0',
    // Every test visits from 127.0.0.1; the budget for unknown codes per address is tested on its own.
    UNKNOWN_CODE_BURST: '1000000',
    REDIRECTOR_METRICS_PORT: '0',
    JWT_SECRET: `test-jwt-secret-${id}-0123456789abcdef`,
    VISITOR_SALT: `test-visitor-salt-${id}`,
    // Where only uWebSockets.js's JS fallback loads (a Node without a native build), the CI run
    // for that Node allows it for every redirector the tests start.
    ...(process.env.ALLOW_UWS_FALLBACK && { ALLOW_UWS_FALLBACK: process.env.ALLOW_UWS_FALLBACK }),
    ...overrides,
  };
  const config = loadConfig(env);
  const sql = createDatabase(config.DATABASE_URL, { max: 4 });
  // Test files run against the single shared server (test/cluster/ builds its own cluster clients).
  const redis = createRedis(config.REDIS_URL) as Redis;
  return {
    config,
    env,
    sql,
    redis,
    async close() {
      await sql.end({ timeout: 5 });
      await deleteKeys(redis, `${env.REDIS_PREFIX}*`);
      await deleteKeys(redis, `${env.QUEUE_PREFIX}:*`);
      redis.disconnect();
      const dropper = createDatabase(adminUrl(), { max: 1 });
      try {
        await dropper.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await dropper.end();
      }
    },
  };
}
