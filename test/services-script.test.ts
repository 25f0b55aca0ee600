import { execFile } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startPrivateRedis } from '@deeplink/test-kit/private-redis';
import { redisUrl } from '@deeplink/test-kit/urls';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase } from '@deeplink/core/db';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..');
const script = join(root, 'scripts/services.mjs');
// Spare ports, so these tests start private servers and never touch the shared ones.
const REDIS_PORT = 16391;
const POSTGRES_PORT = 15439;
const redisDir = join(root, '.data', `redis-${REDIS_PORT}`);
const postgresDir = join(root, '.data', `postgres-${POSTGRES_PORT}`);

const runScript = (env: Record<string, string>) => run(process.execPath, [script], { env: { ...process.env, ...env }, cwd: root });

afterAll(async () => {
  await run('redis-cli', ['-p', String(REDIS_PORT), 'shutdown', 'nosave']).catch(() => {});
  // The cluster lives in .data, or under /var/tmp when the postgres user cannot reach the checkout.
  const sql = createDatabase(`postgres://postgres@127.0.0.1:${POSTGRES_PORT}/postgres`, { max: 1 });
  const [row] = await sql<{ data_directory: string }[]>`SHOW data_directory`.catch(() => [undefined]);
  await sql.end();
  const clusterDir = row?.data_directory ?? postgresDir;
  if (existsSync(clusterDir)) {
    const pgCtl = (await run('sh', ['-c', 'ls -d /usr/lib/postgresql/*/bin/pg_ctl | sort -V | tail -1'])).stdout.trim();
    const asPostgres = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--'] : [];
    await run(asPostgres[0] ?? pgCtl, [
      ...asPostgres.slice(1),
      ...(asPostgres.length ? [pgCtl] : []),
      '-D',
      clusterDir,
      '-m',
      'immediate',
      'stop',
    ]).catch(() => {});
  }
  rmSync(redisDir, { recursive: true, force: true });
  rmSync(postgresDir, { recursive: true, force: true });
  rmSync(clusterDir, { recursive: true, force: true });
});

describe('scripts/services.mjs', () => {
  it('uses servers that already answer, and says so', async () => {
    const { stdout } = await runScript({});
    // Wherever REDIS_URL points (the default otherwise).
    expect(stdout).toContain(`Redis answers at ${new URL(redisUrl()).host}, using it`);
    expect(stdout).toMatch(/PostgreSQL is ready \(database deeplink, hll available\)/);
  });

  it('says once, in one line, what a Redis without AOF risks and how to fix it', async () => {
    const redis = await startPrivateRedis(['--appendonly', 'no', '--maxmemory-policy', 'allkeys-lru']);
    try {
      const { port } = redis;
      const { stdout } = await runScript({ REDIS_URL: redis.url });
      const lines = stdout.split('\n').filter((line) => line.includes('could lose clicks'));
      expect(lines).toEqual([
        `[services] Redis at 127.0.0.1:${port} could lose clicks (appendonly is no: a restart of Redis loses the clicks waiting in the queue; ` +
          'maxmemory-policy is allkeys-lru: memory pressure can evict waiting clicks). ' +
          `Fix: redis-cli -h 127.0.0.1 -p ${port} config set appendonly yes && redis-cli -h 127.0.0.1 -p ${port} config set maxmemory-policy noeviction ` +
          '(and the same in redis.conf to keep it)',
      ]);
    } finally {
      await redis.kill();
    }
  });

  it('starts private Redis and PostgreSQL (with hll and the database) when nothing answers', async () => {
    const { stdout } = await runScript({
      REDIS_URL: `redis://127.0.0.1:${REDIS_PORT}`,
      DATABASE_URL: `postgres://postgres@127.0.0.1:${POSTGRES_PORT}/private_db`,
    });
    expect(stdout).toContain(`starting a private redis-server on 127.0.0.1:${REDIS_PORT}`);
    expect(stdout).toContain(`starting the private PostgreSQL on 127.0.0.1:${POSTGRES_PORT}`);
    expect(stdout).toContain('created database private_db');
    expect((await run('redis-cli', ['-p', String(REDIS_PORT), 'ping'])).stdout.trim()).toBe('PONG');

    const sql = createDatabase(`postgres://postgres@127.0.0.1:${POSTGRES_PORT}/private_db`, { max: 1 });
    try {
      await sql`CREATE EXTENSION IF NOT EXISTS hll`;
      const [row] = await sql<
        { n: number }[]
      >`SELECT hll_cardinality(hll_add_agg(hll_hash_integer(i)))::int AS n FROM generate_series(1, 100) i`;
      expect(row!.n).toBeGreaterThan(90);
    } finally {
      await sql.end();
    }

    // A second run finds them answering and leaves them be.
    const again = await runScript({
      REDIS_URL: `redis://127.0.0.1:${REDIS_PORT}`,
      DATABASE_URL: `postgres://postgres@127.0.0.1:${POSTGRES_PORT}/private_db`,
    });
    expect(again.stdout).toContain(`Redis answers at 127.0.0.1:${REDIS_PORT}, using it`);
    expect(again.stdout).not.toContain('starting');
    // The Redis it starts is durable: nothing to say about it.
    expect(again.stdout).not.toContain('could lose clicks');
  }, 120_000);

  it('fails with a clear message when a remote server does not answer', async () => {
    // 127.0.0.2 is loopback, but not an address the script starts servers on.
    const error = await runScript({ REDIS_URL: 'redis://127.0.0.2:1' }).then(
      () => undefined,
      (e: { code: number; stderr: string }) => e,
    );
    expect(error?.code).toBe(1);
    expect(error?.stderr).toContain(
      'cannot bring the services up: Redis at redis://127.0.0.2:1 does not answer, and it is not a local address to start one on',
    );
  });
});
