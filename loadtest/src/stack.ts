import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDatabase, migrate, type Sql } from '@deeplink/core/db';
import { createRedis, deleteKeys, type RedisClient } from '@deeplink/core/redis';
import { DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL, ensureServices, ensureTool } from '../../scripts/services.mjs';

/** The repository root: the bench writes its results, logs and profiles under .bench/ here. */
export const repoRoot = join(import.meta.dirname, '../..');

/** Busy and total CPU time of the whole machine so far, in clock ticks, from /proc/stat. */
function cpuTicks(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((sum, n) => sum + n, 0);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0); // idle + iowait
  return { busy: total - idle, total };
}

/**
 * Waits until the machine is nearly idle (under `maxBusy` of all cores over one second), or until
 * `timeoutMs`, so that background work (autovacuum, a finishing process) does not land in a
 * measurement. Returns the last busy share seen.
 */
export async function waitForQuiet(maxBusy = 0.15, timeoutMs = 30_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const before = cpuTicks();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const after = cpuTicks();
    const busy = (after.busy - before.busy) / Math.max(1, after.total - before.total);
    if (busy < maxBusy || Date.now() > deadline) return busy;
  }
}

/** The bench's private world on the machine's Redis and PostgreSQL. */
export interface BenchWorld {
  id: string;
  sql: Sql;
  redis: RedisClient;
  redisUrl: string;
  redisPrefix: string;
  /** Queue prefix of the redirector → worker pipeline. */
  queuePrefix: string;
  /** Environment shared by every service process. */
  env: Record<string, string>;
  /** Drops the database and deletes the Redis keys (unless kept). */
  close(keep: boolean): Promise<void>;
}

/**
 * Brings Redis and PostgreSQL up (scripts/services.mjs), creates a fresh migrated database and
 * picks a Redis key prefix and queue prefix that no one else uses.
 */
export async function createBenchWorld(): Promise<BenchWorld> {
  const baseUrl = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  const redisUrl = process.env.REDIS_URL || DEFAULT_REDIS_URL;
  await ensureServices({ databaseUrl: baseUrl, redisUrl });
  ensureTool('wrk'); // the one load generator every HTTP target is measured with

  const id = randomBytes(4).toString('hex');
  const database = `deeplink_bench_${id}`;
  const urlOf = (name: string) => Object.assign(new URL(baseUrl), { pathname: `/${name}` }).toString();
  const admin = createDatabase(urlOf('postgres'), { max: 1 });
  try {
    await admin.unsafe(`CREATE DATABASE ${database}`);
  } finally {
    await admin.end();
  }
  const databaseUrl = urlOf(database);
  const sql = createDatabase(databaseUrl, { max: 4, applicationName: 'deeplink-bench' });
  await migrate(sql);
  const redis = createRedis(redisUrl);
  const redisPrefix = `bench${id}:`;
  const queuePrefix = `benchq${id}`;

  return {
    id,
    sql,
    redis,
    redisUrl,
    redisPrefix,
    queuePrefix,
    env: {
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      REDIS_PREFIX: redisPrefix,
      QUEUE_PREFIX: queuePrefix,
      JWT_SECRET: `bench-jwt-secret-${id}-${randomBytes(16).toString('hex')}`,
      VISITOR_SALT: `bench-visitor-salt-${id}`,
      // The bench is one client hammering the API: the limits would only measure themselves.
      RATE_LIMIT_MAX: '1000000000',
      RATE_LIMIT_ANONYMOUS_MAX: '1000000000',
      RATE_LIMIT_AUTH_MAX: '1000000000',
      APP_RATE_LIMIT_MAX: '1000000000',
      APP_RATE_LIMIT_ADDRESS_MAX: '1000000000',
      // The bench measures speed on whatever Redis REDIS_URL names, durable or not (docs/loadtest.md).
      ALLOW_VOLATILE_REDIS: '1',
    },
    async close(keep) {
      await sql.end({ timeout: 5 });
      if (!keep) {
        for (const pattern of [`${redisPrefix}*`, `${queuePrefix}*`]) await deleteKeys(redis, pattern);
      }
      redis.disconnect();
      if (keep) return;
      const dropper = createDatabase(urlOf('postgres'), { max: 1 });
      try {
        await dropper.unsafe(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      } finally {
        await dropper.end();
      }
    },
  };
}
