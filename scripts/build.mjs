#!/usr/bin/env node
// `npm run build`: bundles each service's src/main.ts with esbuild into services/<name>/dist/main.js
// (ESM, Node 20, with a source map), which is what `npm start`, the bench and the Docker images run.
// The @deeplink/* workspace code is bundled in; every npm package stays an import resolved from
// node_modules at run time (BullMQ reads its Lua scripts from its own folder, uWebSockets.js is a
// native addon). The SQL migrations are copied next to every bundle that applies them, where the
// migrator looks for them (`migrations/` beside the running file).
//
// `npm run build` also builds the dashboard (services/dashboard, Vite) into services/dashboard/dist,
// which the API serves at its origin root; it is skipped when its sources have not changed since.
//
// `node scripts/build.mjs [name…]` builds only the named bundles (see BUNDLES, and `dashboard`); no
// name builds the three services and the dashboard. Files are replaced by rename and unchanged
// files are left alone, so a build may run while processes start from the previous one.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const migrationsDir = join(repoRoot, 'packages/core/src/db/migrations');
const migrator = join(repoRoot, 'packages/core/src/db/migrate.ts');

export const SERVICES = ['api', 'redirector', 'worker'];
/** The bench's comparison servers, bundled like the services so they run the same way. */
export const BENCH_TARGETS = ['bare-uws', 'fastify-peer', 'insert-peer'];

/** Every bundle: name → TypeScript entry and output file, relative to the repository root. */
const BUNDLES = Object.fromEntries([
  ...SERVICES.map((name) => [name, { entry: `services/${name}/src/main.ts`, output: `services/${name}/dist/main.js` }]),
  ...BENCH_TARGETS.map((name) => [name, { entry: `loadtest/src/targets/${name}.ts`, output: `loadtest/dist/targets/${name}.js` }]),
]);

/**
 * Absolute path of a bundle's output file.
 * @param {string} name a service or bench target name
 * @returns {string}
 */
export function bundlePath(name) {
  const bundle = BUNDLES[name];
  if (!bundle) throw new Error(`unknown bundle ${name} (known: ${Object.keys(BUNDLES).join(', ')})`);
  return join(repoRoot, bundle.output);
}

/**
 * Absolute path of a bundle's TypeScript entry, for running it from source through tsx.
 * @param {string} name a service or bench target name
 * @returns {string}
 */
export function sourcePath(name) {
  bundlePath(name); // throws for an unknown name
  return join(repoRoot, BUNDLES[name].entry);
}

/**
 * Node flags a bundle runs with, wherever it runs (`npm start`, the bench; the Dockerfiles repeat them).
 * The redirector's garbage is almost all per request and dies young: 8 MB semi-spaces (16 MB by
 * default) keep its peak RSS under load 20-40 MB lower (110-130 MB instead of 145-155 MB measured
 * by the bench). Smaller ones cost throughput: at 4 MB it collected so often that it answered
 * 4-12 % fewer requests a second.
 *
 * The worker holds up to WORKER_CONCURRENCY batches and builds each transaction's sums while the
 * previous one is written: its live heap stayed under 128 MB even at 256 batches of 500 clicks
 * (measured by running it with --max-old-space-size=128), but left alone V8 grew the heap to
 * 250-300 MB before collecting, a peak RSS of 365-415 MB at 110,000 clicks/s. A 160 MB old space
 * and 8 MB semi-spaces keep it at 210-240 MB at the default 128 batches (97,000-101,000 clicks/s). A worker run with a
 * larger WORKER_CONCURRENCY or CLICK_BATCH_SIZE needs more, or it stops with an out-of-memory
 * error: raise --max-old-space-size in its command (the Dockerfile's CMD); NODE_OPTIONS cannot,
 * since flags on the command line win over it.
 */
const NODE_FLAGS = {
  redirector: ['--max-semi-space-size=8'],
  worker: ['--max-semi-space-size=8', '--max-old-space-size=160'],
};

/**
 * The node flags of a bundle (see NODE_FLAGS).
 * @param {string} name a service or bench target name
 * @returns {string[]}
 */
export function bundleFlags(name) {
  bundlePath(name); // throws for an unknown name
  return NODE_FLAGS[name] ?? [];
}

/** `@scope/name` or `name` of an import specifier such as `uWebSockets.js/dist/index`. */
const packageName = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

/** The folder Node's lookup finds for a package from `fromDir` (node_modules of each ancestor), or null. */
function packageDir(name, fromDir) {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(dir) === dir) return null;
  }
}

/** Writes through a temporary file and a rename, and not at all when the content is already there. */
function replaceFile(path, contents, scratchDir) {
  if (existsSync(path) && readFileSync(path).equals(contents)) return;
  mkdirSync(dirname(path), { recursive: true });
  const scratch = join(scratchDir, `.${process.pid}-${Math.random().toString(36).slice(2)}.tmp`);
  writeFileSync(scratch, contents);
  renameSync(scratch, path);
}

/**
 * Bundles the named services and bench targets. Throws (after esbuild has printed why) when a
 * bundle cannot be built or when a package would resolve to another copy from the bundle's folder.
 * @param {string[]} [names]
 * @returns {Promise<{ names: string[], ms: number }>}
 */
export async function buildBundles(names = SERVICES) {
  const started = performance.now();
  const outputs = names.map((name) => bundlePath(name)); // validates the names
  /** Each npm package imported, with the folder it was imported from. */
  const imported = new Map();
  const result = await build({
    absWorkingDir: repoRoot,
    entryPoints: names.map((name) => ({ in: BUNDLES[name].entry, out: BUNDLES[name].output.replace(/\.js$/, '') })),
    outdir: repoRoot,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    write: false,
    metafile: true,
    logLevel: 'warning',
    plugins: [
      {
        name: 'npm-packages-external',
        setup(build) {
          build.onResolve({ filter: /^[^./]/ }, (args) => {
            if (args.path.startsWith('@deeplink/') || isBuiltin(args.path)) return undefined;
            const name = packageName(args.path);
            if (!imported.has(name)) imported.set(name, args.resolveDir);
            return { path: args.path, external: true };
          });
        },
      },
    ],
  });

  // The bundle imports packages from its own folder: each must be the copy its source would load.
  const problems = [];
  for (const [name, fromDir] of imported) {
    const expected = packageDir(name, fromDir);
    if (!expected) problems.push(`${name} (imported from ${relative(repoRoot, fromDir)}) is not installed`);
    for (const output of outputs) {
      const found = packageDir(name, dirname(output));
      if (expected && found && found !== expected) {
        problems.push(`${relative(repoRoot, output)} would load ${relative(repoRoot, found)}, not ${relative(repoRoot, expected)}`);
      }
    }
  }
  if (problems.length > 0) throw new Error(`cannot bundle:\n  ${problems.join('\n  ')}`);

  for (const file of result.outputFiles) replaceFile(file.path, Buffer.from(file.contents), dirname(file.path));
  const sqlFiles = readdirSync(migrationsDir).filter((file) => file.endsWith('.sql'));
  for (const output of outputs) {
    const inputs = result.metafile.outputs[relative(repoRoot, output)]?.inputs ?? {};
    if (!(relative(repoRoot, migrator) in inputs)) continue;
    const target = join(dirname(output), 'migrations');
    mkdirSync(target, { recursive: true });
    for (const file of sqlFiles) replaceFile(join(target, file), readFileSync(join(migrationsDir, file)), dirname(output));
    for (const file of readdirSync(target)) if (!sqlFiles.includes(file)) rmSync(join(target, file), { force: true });
  }
  return { names, ms: Math.round(performance.now() - started) };
}

const dashboardDir = join(repoRoot, 'services/dashboard');
/** What the dashboard is built from: its own files and the client's source, which it bundles. */
const DASHBOARD_INPUTS = [
  'services/dashboard/src',
  'services/dashboard/public',
  'services/dashboard/index.html',
  'services/dashboard/vite.config.ts',
  'services/dashboard/package.json',
  'packages/client/src',
];
/** Written beside the build: the inputs' hash, so an unchanged dashboard is not built again. */
const DASHBOARD_STAMP = join(dashboardDir, 'dist', '.inputs-sha256');

function hashInputs() {
  const hash = createHash('sha256');
  const add = (path) => {
    if (!existsSync(path)) return;
    if (statSync(path).isDirectory()) for (const entry of readdirSync(path).sort()) add(join(path, entry));
    else hash.update(relative(repoRoot, path)).update(readFileSync(path));
  };
  for (const input of DASHBOARD_INPUTS) add(join(repoRoot, input));
  return hash.digest('hex');
}

/**
 * Gzipped bytes of the JavaScript a first visit loads: the entry script and the modules
 * index.html preloads (pages split off with import() would come later, and are not counted).
 * @param {string} dist
 * @returns {number}
 */
export function initialJavaScriptGzipBytes(dist) {
  const html = readFileSync(join(dist, 'index.html'), 'utf8');
  const scripts = [...html.matchAll(/<(?:script[^>]*\bsrc|link[^>]*rel="modulepreload"[^>]*\bhref)="\/([^"]+\.js)"/g)].map(
    (match) => match[1],
  );
  return scripts.reduce((sum, file) => sum + gzipSync(readFileSync(join(dist, file)), { level: 9 }).length, 0);
}

/**
 * Builds the dashboard's static files with Vite into services/dashboard/dist, unless they were
 * built from the same sources already.
 * @param {{ force?: boolean }} [options]
 * @returns {Promise<{ ms: number, skipped: boolean, initialJsGzipBytes: number }>}
 */
export async function buildDashboard({ force = false } = {}) {
  const started = performance.now();
  const dist = join(dashboardDir, 'dist');
  const inputs = hashInputs();
  const upToDate =
    !force && existsSync(DASHBOARD_STAMP) && readFileSync(DASHBOARD_STAMP, 'utf8') === inputs && existsSync(join(dist, 'index.html'));
  if (!upToDate) {
    // Vite is a devDependency of the dashboard, loaded only when there is something to build.
    const { build: viteBuild } = await import('vite');
    // Vite builds for whatever NODE_ENV says (vitest sets `test`, which keeps development-only code
    // in): the dashboard is always built for production, whoever builds it.
    const nodeEnv = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    try {
      await viteBuild({ configFile: join(dashboardDir, 'vite.config.ts'), logLevel: 'warn', mode: 'production' });
    } finally {
      if (nodeEnv === undefined) delete process.env.NODE_ENV;
      else process.env.NODE_ENV = nodeEnv;
    }
    writeFileSync(DASHBOARD_STAMP, inputs);
  }
  return { ms: Math.round(performance.now() - started), skipped: upToDate, initialJsGzipBytes: initialJavaScriptGzipBytes(dist) };
}

/**
 * The line `npm run build` and `npm start` print about the dashboard.
 * @param {{ ms: number, skipped: boolean, initialJsGzipBytes: number }} built
 */
export const describeDashboardBuild = (built) =>
  `dashboard ${built.skipped ? 'unchanged since the last build' : `built in ${built.ms} ms`} (services/dashboard/dist): initial JavaScript ${(built.initialJsGzipBytes / 1024).toFixed(1)} KB gzipped`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const names = process.argv.slice(2);
  const bundles = names.length > 0 ? names.filter((name) => name !== 'dashboard') : SERVICES;
  try {
    if (bundles.length > 0) {
      const built = await buildBundles(bundles);
      console.log(`[build] ${built.names.join(', ')} bundled in ${built.ms} ms`);
    }
    if (names.length === 0 || names.includes('dashboard')) console.log(`[build] ${describeDashboardBuild(await buildDashboard())}`);
  } catch (error) {
    console.error(`[build] ${error.message}`);
    process.exit(1);
  }
}
