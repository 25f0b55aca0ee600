#!/usr/bin/env node
// `npm start`: bundles the services and builds the dashboard (scripts/build.mjs), brings Redis and PostgreSQL up if needed,
// applies migrations, then runs the API, the redirector and the worker from their bundles
// (services/<name>/dist/main.js) with prefixed output. Ctrl-C (or SIGTERM) stops all three cleanly.
import { spawn, spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildBundles, buildDashboard, bundleFlags, bundlePath, describeDashboardBuild, SERVICES } from './build.mjs';
import { ensureServices } from './services.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The ports the services listen on, with the defaults of packages/core's configuration. */
const PORTS = {
  API_PORT: 3000,
  API_METRICS_PORT: 9091,
  REDIRECTOR_PORT: 8080,
  REDIRECTOR_METRICS_PORT: 9092,
  WORKER_PORT: 8090,
};

// A second `npm start` (or anything else on these ports) is told so in one line, before any build.
for (const [name, fallback] of Object.entries(PORTS)) {
  const port = Number(process.env[name] ?? fallback);
  if (await inUse(port)) {
    console.error(`[start] port ${port} (${name}) is in use: is npm start already running? Stop it, or set ${name} to another port`);
    process.exit(1);
  }
}

/** Whether something accepts connections on 127.0.0.1:`port`. */
function inUse(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

try {
  const built = await buildBundles(SERVICES);
  console.log(`[start] bundled ${built.names.join(', ')} into services/*/dist in ${built.ms} ms`);
  console.log(`[start] ${describeDashboardBuild(await buildDashboard())}`);
} catch (error) {
  console.error(`[start] cannot build the services: ${error.message}`);
  process.exit(1);
}

await ensureServices().catch((error) => {
  console.error(`[start] cannot bring the services up: ${error.message}`);
  process.exit(1);
});

// The migrations run from source (tsx, a root devDependency), before any service starts.
const migration = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'packages/core/src/migrate-cli.ts')], {
  stdio: 'inherit',
  cwd: root,
});
if (migration.status !== 0) process.exit(migration.status ?? 1);

const children = [];
let stopping = false;
for (const name of SERVICES) {
  const child = spawn(process.execPath, ['--enable-source-maps', ...bundleFlags(name), bundlePath(name)], {
    cwd: root,
    // ensureServices has said once what the queue's Redis risks, if anything: not once per service again.
    env: { ...process.env, QUEUE_DURABILITY_NOTED: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const prefix = `[${name}]`.padEnd(13);
  for (const stream of [child.stdout, child.stderr]) {
    let pending = '';
    stream.on('data', (chunk) => {
      const lines = (pending + chunk).split('\n');
      pending = lines.pop();
      for (const line of lines) process.stdout.write(`${prefix}${line}\n`);
    });
  }
  child.on('exit', (code, signal) => {
    console.log(`${prefix}exited (${signal ?? code})`);
    children.splice(children.indexOf(child), 1);
    if (!stopping)
      stop(code || 1); // one service down means the stack is not what was asked for
    else if (children.length === 0) process.exit(process.exitCode ?? 0);
  });
  children.push(child);
}

// Said once the API answers, so that the address is the last line before the services' own.
const apiUrl = `http://${process.env.API_HOST ?? '127.0.0.1'}:${process.env.API_PORT ?? 3000}`;
void untilAnswers(`${apiUrl}/healthz`, 60_000).then((up) => {
  if (stopping) return;
  console.log(
    up
      ? `[start] ready: open ${apiUrl}/ and sign in (API at ${apiUrl}/api, docs at /api/docs; short links at ${process.env.SHORT_URL_BASE ?? 'http://127.0.0.1:8080'}); Ctrl-C stops everything`
      : `[start] the API did not answer at ${apiUrl}/healthz within a minute; its lines above say why`,
  );
});

/** Resolves true once `url` answers 200, false after `timeoutMs`. */
async function untilAnswers(url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !stopping) {
    const ok = await fetch(url, { signal: AbortSignal.timeout(1_000) }).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return true;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}

function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  process.exitCode = code;
  for (const child of children) child.kill('SIGTERM');
  if (children.length === 0) process.exit(code);
}
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));
