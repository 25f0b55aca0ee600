#!/usr/bin/env node
// Makes Redis and PostgreSQL (with the `hll` extension) reachable at REDIS_URL and
// DATABASE_URL. Uses servers that already answer there; otherwise starts private ones
// with their data under .data/ in the repository, installing the Debian packages first
// when they are missing and we are root. Creates the database if it does not exist.
// Usable as a command (`npm run services`) and as a module (`ensureServices()`).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL } from '../packages/core/src/default-urls.mjs';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const dataDir = join(repoRoot, '.data');

export { DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL };

const log = (message) => console.log(`[services] ${message}`);

class ServiceError extends Error {}

/** Resolves true when something accepts a TCP connection at host:port within timeoutMs. */
function canConnect(host, port, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Sends PING over RESP and resolves true on +PONG (or a NOAUTH answer, which still means Redis). */
function redisAnswers(host, port, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    let reply = '';
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG') || reply.includes('NOAUTH'));
    });
    socket.once('error', () => done(false));
  });
}

async function waitFor(check, what, timeoutMs = 20000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new ServiceError(`${what} did not come up within ${timeoutMs / 1000}s`);
}

export const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;
const hasCommand = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;

let aptUpdated = false;
export function aptInstall(packages, why) {
  if (!isRoot()) {
    throw new ServiceError(
      `${why}, and installing it needs root. Install the Debian packages yourself: sudo apt-get install ${packages.join(' ')}`,
    );
  }
  log(`${why}: installing ${packages.join(' ')} with apt-get`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (!aptUpdated) {
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
    aptUpdated = true;
  }
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages], { stdio: 'inherit', env });
}

/**
 * Asks Redis for one setting (CONFIG GET over RESP); resolves its value, or undefined when CONFIG
 * is refused (managed services, or a password) or the answer is not understood.
 */
function redisSetting(host, port, name, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    let reply = '';
    const done = (value) => {
      socket.destroy();
      resolve(value);
    };
    socket.setTimeout(timeoutMs, () => done(undefined));
    socket.once('connect', () => socket.write(`*3\r\n$6\r\nCONFIG\r\n$3\r\nGET\r\n$${name.length}\r\n${name}\r\n`));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (!reply.startsWith('*')) return done(undefined); // an error: CONFIG refused
      const lines = reply.split('\r\n');
      if (lines.length >= 6) done(lines[0] === '*2' ? lines[4] : undefined);
    });
    socket.once('error', () => done(undefined));
  });
}

/** What the click queue needs of its Redis (as packages/core's DURABLE_REDIS says), and what losing it costs. */
const DURABLE_REDIS = [
  ['appendonly', 'yes', 'a restart of Redis loses the clicks waiting in the queue'],
  ['maxmemory-policy', 'noeviction', 'memory pressure can evict waiting clicks'],
];

/**
 * Says once, in one line, when a Redis found running could lose queued clicks, with the commands
 * that fix it (the services themselves stay quiet about it under `npm start`).
 */
async function noteRedisDurability(host, port) {
  const problems = [];
  for (const [setting, wanted, risk] of DURABLE_REDIS) {
    const value = await redisSetting(host, port, setting);
    if (value === undefined) {
      log(
        `cannot read the configuration of Redis at ${host}:${port}; the click queue needs appendonly yes and maxmemory-policy noeviction`,
      );
      return;
    }
    if (value !== wanted) problems.push({ setting, value, wanted, risk });
  }
  if (problems.length === 0) return;
  const risks = problems.map(({ setting, value, risk }) => `${setting} is ${value || 'unset'}: ${risk}`).join('; ');
  const fixes = problems.map(({ setting, wanted }) => `redis-cli -h ${host} -p ${port} config set ${setting} ${wanted}`).join(' && ');
  log(`Redis at ${host}:${port} could lose clicks (${risks}). Fix: ${fixes} (and the same in redis.conf to keep it)`);
}

async function ensureRedis(url) {
  const { hostname, port: portText } = new URL(url);
  const port = Number(portText || 6379);
  if (await redisAnswers(hostname, port)) {
    log(`Redis answers at ${hostname}:${port}, using it`);
    await noteRedisDurability(hostname, port);
    return;
  }
  if (!isLocal(hostname)) throw new ServiceError(`Redis at ${url} does not answer, and it is not a local address to start one on`);
  if (!hasCommand('redis-server')) aptInstall(['redis-server'], 'redis-server is not installed');
  const dir = join(dataDir, `redis-${port}`);
  mkdirSync(dir, { recursive: true });
  log(`starting a private redis-server on 127.0.0.1:${port} (data in ${dir}, append-only file synced every second)`);
  // The click queue lives in this Redis: a restart must keep its jobs (AOF), and memory pressure
  // must never evict one (noeviction makes writes fail instead, which the redirector spools).
  execFileSync('redis-server', [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--daemonize',
    'yes',
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    'yes',
    '--appendfsync',
    'everysec',
    '--maxmemory-policy',
    'noeviction',
    '--logfile',
    join(dir, 'redis.log'),
    '--pidfile',
    join(dir, 'redis.pid'),
  ]);
  await waitFor(() => redisAnswers('127.0.0.1', port), 'redis-server');
  log('Redis is up');
}

const isLocal = (host) => ['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host);

export function postgresBinDir() {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base).filter((v) => existsSync(join(base, v, 'bin', 'pg_ctl')));
  versions.sort((a, b) => Number(b) - Number(a));
  return versions[0] ? { version: versions[0], bin: join(base, versions[0], 'bin') } : undefined;
}

export function runAsPostgres(command, args) {
  // PostgreSQL refuses to run as root, so its tools run as the `postgres` user.
  const [cmd, cmdArgs] = isRoot() ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  const result = spawnSync(cmd, cmdArgs, { encoding: 'utf8' });
  if (result.status !== 0) {
    throw new ServiceError(`${command} ${args.join(' ')} failed:\n${result.stderr || result.stdout}`);
  }
  return result.stdout;
}

async function startPrivatePostgres(port) {
  let pg = postgresBinDir();
  if (!pg) {
    aptInstall(['postgresql', 'postgresql-contrib'], 'PostgreSQL is not installed');
    pg = postgresBinDir();
    if (!pg) throw new ServiceError('PostgreSQL was installed but no pg_ctl was found under /usr/lib/postgresql');
  }
  let base = dataDir;
  mkdirSync(base, { recursive: true });
  if (isRoot()) {
    execFileSync('chown', ['postgres:postgres', base]);
    // A checkout under a private folder (mktemp -d is mode 0700) is out of the postgres user's
    // reach; the cluster then lives in a folder of its own under /var/tmp instead.
    if (spawnSync('runuser', ['-u', 'postgres', '--', 'test', '-w', base]).status !== 0) {
      base = join('/var/tmp', `deeplink-${repoRoot.replace(/[^A-Za-z0-9]+/g, '-')}`);
      mkdirSync(base, { recursive: true });
      execFileSync('chown', ['postgres:postgres', base]);
      log(`the postgres user cannot reach ${dataDir}; keeping the cluster in ${base}`);
    }
  }
  const dir = join(base, `postgres-${port}`);
  if (!existsSync(join(dir, 'PG_VERSION'))) {
    log(`initialising a private PostgreSQL ${pg.version} cluster in ${dir}`);
    runAsPostgres(join(pg.bin, 'initdb'), ['-D', dir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-locale']);
  }
  log(`starting the private PostgreSQL on 127.0.0.1:${port}`);
  runAsPostgres(join(pg.bin, 'pg_ctl'), [
    '-D',
    dir,
    '-l',
    join(dir, 'server.log'),
    '-w',
    'start',
    '-o',
    `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir}`,
  ]);
  await waitFor(() => canConnect('127.0.0.1', port), 'PostgreSQL');
}

async function ensurePostgres(url) {
  const parsed = new URL(url);
  const port = Number(parsed.port || 5432);
  const database = decodeURIComponent(parsed.pathname.slice(1)) || 'postgres';
  if (await canConnect(parsed.hostname, port)) {
    log(`PostgreSQL answers at ${parsed.hostname}:${port}, using it`);
  } else {
    if (!isLocal(parsed.hostname)) {
      throw new ServiceError(`PostgreSQL at ${parsed.hostname}:${port} does not answer, and it is not a local address to start one on`);
    }
    await startPrivatePostgres(port);
  }

  const { default: postgres } = await import('postgres');
  const adminUrl = new URL(url);
  adminUrl.pathname = '/postgres';
  const sql = postgres(adminUrl.toString(), { max: 1, onnotice: () => {}, connect_timeout: 10 });
  try {
    const [{ server_version_num: versionNum }] = await sql`SHOW server_version_num`;
    const major = Math.floor(Number(versionNum) / 10000);
    const [hll] = await sql`SELECT 1 FROM pg_available_extensions WHERE name = 'hll'`;
    if (!hll) {
      if (!isLocal(parsed.hostname)) {
        throw new ServiceError(`the PostgreSQL server at ${parsed.hostname} has no 'hll' extension; install postgresql-${major}-hll there`);
      }
      aptInstall([`postgresql-${major}-hll`], `the 'hll' extension is missing for PostgreSQL ${major}`);
    }
    const [exists] = await sql`SELECT 1 FROM pg_database WHERE datname = ${database}`;
    if (!exists) {
      await sql.unsafe(`CREATE DATABASE ${quoteIdent(database)}`);
      log(`created database ${database}`);
    }
  } finally {
    await sql.end({ timeout: 5 });
  }
  log(`PostgreSQL is ready (database ${database}, hll available)`);
}

const quoteIdent = (name) => `"${name.replaceAll('"', '""')}"`;

/** Makes a command-line tool from a Debian package available (the benchmark's `wrk`), installing it as root. */
export function ensureTool(command, debianPackage = command) {
  if (hasCommand(command)) return;
  aptInstall([debianPackage], `${command} is not installed`);
  if (!hasCommand(command)) throw new ServiceError(`${debianPackage} was installed but ${command} is still not on PATH`);
}

/** Brings up Redis and PostgreSQL for the given URLs (defaults: the environment, then DESIGN.md's addresses). */
export async function ensureServices({
  redisUrl = process.env.REDIS_URL ?? DEFAULT_REDIS_URL,
  databaseUrl = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL,
} = {}) {
  await ensureRedis(redisUrl);
  await ensurePostgres(databaseUrl);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  ensureServices().catch((error) => {
    console.error(`[services] cannot bring the services up: ${error instanceof ServiceError ? error.message : error.stack}`);
    process.exit(1);
  });
}
