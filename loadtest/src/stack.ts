import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDatabase, migrate, type Sql } from '@deeplink/core/db';
import { createRedis, deleteKeys, type RedisClient } from '@deeplink/core/redis';
import { DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL, ensureServices, ensureTool } from '../../scripts/services.mjs';
import { freePort } from '../../test/support/processes.js';

/** The repository root: services are started from here, as `npm start` does. */
export const repoRoot = join(import.meta.dirname, '../..');

export { freePort };

/** Current and peak resident set size of a process, in bytes, from /proc/<pid>/status. */
export function readMemory(pid: number): { rss: number; peakRss: number } | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kib('VmRSS'), peakRss: kib('VmHWM') };
}

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

/** A process the bench started; stop() is idempotent. */
export interface ManagedProcess {
  name: string;
  pid: number;
  /** Peak RSS so far (VmHWM), in bytes. */
  peakRss(): number;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the peak RSS seen before it exited. */
  stop(graceMs?: number): Promise<number>;
}

export interface ProcessSpec {
  name: string;
  /**
   * What to run: a bundle (`.js`, from scripts/build.mjs), run with plain `node --enable-source-maps`
   * as `npm start` and the Docker images do, or a TypeScript file, run with `node --import tsx`.
   */
  entry: string;
  env: Record<string, string>;
  /** Answers once the process serves requests (any HTTP answer counts). */
  readyUrl: string;
  /** `taskset -c` CPU list. */
  cpus?: string;
  /** Extra node flags (e.g. --cpu-prof). */
  nodeArgs?: string[];
  /** Output goes here, for post-mortems. */
  logFile: string;
  timeoutMs?: number;
  /** Called as soon as the process exists, before it is ready, so an interrupted start can still stop it. */
  onSpawn?: (process: ManagedProcess) => void;
}

async function answers(url: string): Promise<boolean> {
  try {
    await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(1000) });
    return true;
  } catch {
    return false;
  }
}

/** Starts a process and waits until `readyUrl` answers; fails with the tail of its output otherwise. */
export async function startProcess(spec: ProcessSpec): Promise<ManagedProcess> {
  const loader = spec.entry.endsWith('.ts') ? ['--import', 'tsx'] : ['--enable-source-maps'];
  const node = [process.execPath, ...(spec.nodeArgs ?? []), ...loader, spec.entry];
  const [command, ...args] = spec.cpus ? ['taskset', '-c', spec.cpus, ...node] : node;
  const child: ChildProcess = spawn(command!, args, {
    cwd: repoRoot,
    env: { ...process.env, ...spec.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = createWriteStream(spec.logFile);
  let tail = '';
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.on('data', (chunk: Buffer) => {
      log.write(chunk);
      tail = (tail + chunk.toString()).slice(-4000);
    });
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const isRunning = () => child.exitCode === null && child.signalCode === null;
  let peak = 0;
  const peakRss = () => {
    peak = Math.max(peak, readMemory(child.pid!)?.peakRss ?? 0);
    return peak;
  };
  const managed: ManagedProcess = {
    name: spec.name,
    pid: child.pid!,
    peakRss,
    async stop(graceMs = 15_000) {
      if (isRunning()) {
        peakRss();
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      log.end();
      return peak;
    },
  };

  spec.onSpawn?.(managed);
  const deadline = Date.now() + (spec.timeoutMs ?? 30_000);
  while (!(await answers(spec.readyUrl))) {
    if (!isRunning()) throw new Error(`${spec.name} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${tail}`);
    if (Date.now() > deadline) {
      await managed.stop(1000);
      throw new Error(`${spec.name} did not answer ${spec.readyUrl} in time:\n${tail}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return managed;
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
