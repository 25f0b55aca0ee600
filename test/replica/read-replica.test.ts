import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@deeplink/core';
import { createDatabase, migrate, type Sql } from '@deeplink/core/db';
import { createRedis, deleteKeys } from '@deeplink/core/redis';
import { withTimeout } from '@deeplink/core/runtime';
import { buildApi } from '../../services/api/src/app.js';
import { recordClicks, rollupClick } from '@deeplink/test-kit/rollups';
import { startPrimary, startReplica, type PrivatePostgres } from '@deeplink/test-kit/private-postgres';
import { redisUrl } from '@deeplink/test-kit/urls';

// A private primary and a real streaming replica of it (pg_basebackup), the API reading analytics
// from the replica. That the reads come from the replica is shown by pausing its replay: clicks
// committed on the primary meanwhile stay out of the API's numbers until replay resumes.

/** Read deadline of the API under test: a frozen replica costs a read at most this long. */
const READ_TIMEOUT_MS = 1500;

/** The server's postmaster and every process it started (backends, the WAL receiver…). */
function serverProcesses(server: PrivatePostgres): number[] {
  const postmaster = Number(readFileSync(`${server.dir}/postmaster.pid`, 'utf8').split('\n')[0]);
  const children = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        // The parent's pid is the field after the command name, which is in parentheses and may hold spaces.
        return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]) === postmaster;
      } catch {
        return false; // ended meanwhile
      }
    });
  return [postmaster, ...children.map(Number)];
}

/** Freezes the server as a hung host would be: it keeps its sockets open and answers nothing. Returns the thaw. */
function freeze(server: PrivatePostgres): () => void {
  const pids = serverProcesses(server);
  for (const pid of pids) process.kill(pid, 'SIGSTOP');
  return () => {
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // ended while frozen
      }
    }
  };
}

describe('analytics from a streaming read replica', { timeout: 120_000 }, () => {
  let primary: PrivatePostgres;
  let replica: PrivatePostgres;
  let sql: Sql;
  let readSql: Sql;
  let replicaAdmin: Sql;
  let redis: Redis;
  let subscriber: Redis;
  let redisPrefix: string;
  let api: FastifyInstance;
  let token: string;
  let linkId: string;

  beforeAll(async () => {
    primary = await startPrimary();
    const admin = createDatabase(primary.url(), { max: 1 });
    await admin`CREATE DATABASE deeplink`.finally(() => admin.end());
    const id = randomBytes(5).toString('hex');
    redisPrefix = `t${id}:`;
    const vars = {
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      DATABASE_URL: primary.url('deeplink'),
      REDIS_URL: redisUrl(),
      REDIS_PREFIX: redisPrefix,
      JWT_SECRET: `test-jwt-secret-${id}-0123456789abcdef`,
      VISITOR_SALT: `test-visitor-salt-${id}`,
      RATE_LIMIT_MAX: '100000',
    };
    sql = createDatabase(vars.DATABASE_URL, { max: 4 });
    await migrate(sql);
    // The replica is copied from the migrated primary; everything later reaches it by streaming.
    replica = await startReplica(primary);
    replicaAdmin = createDatabase(replica.url('deeplink'), { max: 1 });
    readSql = createDatabase(replica.url('deeplink'), { max: 4, applicationName: 'deeplink-api-read', connectTimeoutSeconds: 2 });
    redis = createRedis(vars.REDIS_URL) as Redis;
    subscriber = redis.duplicate();
    const config = loadConfig({ ...vars, DATABASE_READ_URL: replica.url('deeplink'), DATABASE_READ_TIMEOUT_MS: String(READ_TIMEOUT_MS) });
    api = await buildApi({ config, sql, readSql, redis, subscriber });

    const register = await api.inject({
      method: 'POST',
      url: '/api/auth/register',
      payload: { name: 'R', email: 'replica@example.com', password: 'correct horse battery' },
    });
    token = register.json().data.token;
    // Created on the primary and checked there: the link is found before the replica has it.
    const created = await api.inject({
      method: 'POST',
      url: '/api/links',
      headers: { authorization: `Bearer ${token}` },
      payload: { title: 'R', defaultUrl: 'https://r.example' },
    });
    linkId = created.json().data.link.id;
  });

  afterAll(async () => {
    try {
      // Each step bounded and named: a teardown that waits on a server it just stopped says which.
      await withTimeout(api?.close() ?? Promise.resolve(), 15_000, 'closing the API');
      subscriber?.disconnect();
      // A query the stopped replica never answered is cut off rather than waited for.
      await Promise.all([sql?.end({ timeout: 5 }), readSql?.end({ timeout: 5 }), replicaAdmin?.end({ timeout: 5 })]);
      if (redis) {
        await withTimeout(deleteKeys(redis, `${redisPrefix}*`), 15_000, 'deleting the Redis keys');
        redis.disconnect();
      }
    } finally {
      replica?.destroy();
      primary?.destroy();
    }
  });

  const get = (url: string) => api.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
  const reported = async () => {
    const response = await get(`/api/analytics/links/${linkId}`);
    expect(response.statusCode, response.body).toBe(200);
    return response.json().data.analytics.totalClicks as number;
  };
  const summarized = async () => (await get('/api/analytics/summary')).json().data.summary.totalClicks as number;
  /** The total rows of the CSV export, summed. */
  const exported = async () => {
    const response = await get(`/api/analytics/links/${linkId}/export?format=csv&timeBucket=day`);
    expect(response.statusCode, response.body).toBe(200);
    return response.body
      .split('\r\n')
      .filter((line) => line.includes(',total,'))
      .reduce((sum, line) => sum + Number(line.split(',').at(-1)), 0);
  };
  const onPrimary = async () =>
    (await sql<{ n: number }[]>`SELECT coalesce(sum(clicks), 0)::int AS n FROM click_daily WHERE link_id = ${linkId}`)[0]!.n;
  /** Clicks committed on the primary, as the worker commits them. */
  const sendClicks = (n: number) =>
    recordClicks(
      sql,
      Array.from({ length: n }, (_, i) => rollupClick(linkId, Date.now() - i * 1000, { visitor: `visitor-${i}` })),
    );

  it('reads the report, the summary and the export from the replica, lagging while its replay is paused', async () => {
    await sendClicks(10);
    await expect.poll(reported, { timeout: 20_000 }).toBe(10);
    const [connection] = await replicaAdmin`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'deeplink-api-read'`;
    expect(connection!.n).toBeGreaterThan(0);

    await replicaAdmin`SELECT pg_wal_replay_pause()`;
    await expect.poll(async () => (await replicaAdmin`SELECT pg_get_wal_replay_pause_state() AS state`)[0]!.state).toBe('paused');
    await sendClicks(5);
    expect(await onPrimary()).toBe(15);
    // The primary has 15; every analytics read still shows the replica's 10.
    expect(await reported()).toBe(10);
    expect(await summarized()).toBe(10);
    expect(await exported()).toBe(10);

    await replicaAdmin`SELECT pg_wal_replay_resume()`;
    await expect.poll(reported, { timeout: 20_000 }).toBe(15);
    expect(await summarized()).toBe(15);
    expect(await exported()).toBe(15);
  });

  it('answers from the primary within the read deadline while the replica is frozen, and reads the replica again once it answers', async () => {
    await replicaAdmin`SELECT pg_wal_replay_pause()`;
    await expect.poll(async () => (await replicaAdmin`SELECT pg_get_wal_replay_pause_state() AS state`)[0]!.state).toBe('paused');
    await sendClicks(1);
    // The replica's 15 against the primary's 16 tells which one answered.
    expect(await reported()).toBe(15);

    const thaw = freeze(replica);
    try {
      const started = performance.now();
      // Bounded, so that a read stuck on the frozen server fails the test instead of leaving the server frozen.
      const answers = await withTimeout(Promise.all([reported(), summarized(), exported()]), READ_TIMEOUT_MS + 10_000, 'analytics reads');
      const waited = performance.now() - started;
      expect(answers).toEqual([16, 16, 16]);
      // Each read waited for the deadline once, then the primary answered (a loaded machine's margin on top).
      expect(waited).toBeGreaterThanOrEqual(READ_TIMEOUT_MS - 10);
      expect(waited).toBeLessThan(READ_TIMEOUT_MS + 3_000);

      // The replica is down: later reads go to the primary without waiting for it.
      for (let i = 0; i < 3; i++) {
        const again = performance.now();
        expect(await withTimeout(reported(), READ_TIMEOUT_MS + 10_000, 'a later read')).toBe(16);
        expect(performance.now() - again).toBeLessThan(READ_TIMEOUT_MS / 2);
      }
    } finally {
      thaw();
    }

    // Thawed, it answers the probe, and reads come from it again (its replay still paused: 15).
    await expect.poll(reported, { timeout: 20_000, interval: 250 }).toBe(15);
    await replicaAdmin`SELECT pg_wal_replay_resume()`;
    await expect.poll(reported, { timeout: 20_000 }).toBe(16);
  });

  it('falls back to the primary when the replica is down', async () => {
    replica.stop('immediate');
    await sendClicks(2);
    expect(await reported()).toBe(18);
    expect(await summarized()).toBe(18);
    expect(await exported()).toBe(18);
  });
});
