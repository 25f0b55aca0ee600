#!/usr/bin/env node
// `npm start`: bundles the services and builds the dashboard (scripts/build.mjs), brings Redis and PostgreSQL up if needed,
// applies migrations, then runs the API, the redirector and the worker from their bundles
// (services/<name>/dist/main.js) with prefixed output. Ctrl-C (or SIGTERM) stops all three cleanly.
import { spawn, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildBundles, buildDashboard, bundleFlags, bundlePath, describeDashboardBuild, SERVICES } from './build.mjs';
import { ensureServices } from './services.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

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

console.log(
  `[start] dashboard ${process.env.API_PORT ? `on port ${process.env.API_PORT}` : 'at http://127.0.0.1:3000/'}, API at /api (docs at /api/docs); redirector at ${process.env.SHORT_URL_BASE ?? 'http://127.0.0.1:8080'}; Ctrl-C stops everything`,
);

function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  process.exitCode = code;
  for (const child of children) child.kill('SIGTERM');
  if (children.length === 0) process.exit(code);
}
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));
