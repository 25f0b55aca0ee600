// The registry's base images cannot be pulled here, so stand-ins are built from Debian's packages
// under the very names docker/ references. Each keeps what the compose file relies on of the
// official image (see the Containerfiles beside this file). A name that already holds an image that
// is not a stand-in (the real one, pulled on a machine that can) is left alone.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cacheDir, podman, run } from './podman.js';

const standInsDir = join(import.meta.dirname, 'stand-ins');
const STAND_IN_LABEL = 'org.deeplink.stand-in';
const BASE = 'localhost/deeplink-standin-debian';

/** Each base image docker/ references, and the Containerfile of its stand-in. */
export const STAND_INS = {
  'docker.io/library/node:20-bookworm-slim': 'node.Containerfile',
  'docker.io/library/node:22-bookworm-slim': 'node.Containerfile',
  'docker.io/library/redis:7.2-bookworm': 'redis.Containerfile',
  'docker.io/library/postgres:15-bookworm': 'postgres.Containerfile',
  'docker.io/prom/prometheus:v2.53.0': 'prometheus.Containerfile',
} as const;

async function imageExists(env: NodeJS.ProcessEnv, name: string): Promise<boolean> {
  return (await run('podman', ['image', 'exists', name], { env, log: 'stand-ins', allowFailure: true })).code === 0;
}

/**
 * Debian bookworm as an image: debootstrap's minimal root, imported once and kept in podman's
 * storage (a second run finds it and skips the minute debootstrap takes).
 */
async function ensureDebianRoot(env: NodeJS.ProcessEnv): Promise<void> {
  if (await imageExists(env, `${BASE}:rootfs`)) return;
  const rootfs = join(cacheDir, 'rootfs');
  rmSync(rootfs, { recursive: true, force: true });
  await run('debootstrap', ['--variant=minbase', 'bookworm', rootfs, 'http://deb.debian.org/debian'], { env, log: 'debootstrap' });
  const tar = spawn('tar', ['-C', rootfs, '-c', '.'], { stdio: ['ignore', 'pipe', 'inherit'] });
  await run('podman', ['import', '-', `${BASE}:rootfs`], { env, log: 'stand-ins', stdin: tar.stdout });
  rmSync(rootfs, { recursive: true, force: true });
}

/**
 * Builds every stand-in whose name is free or holds an older stand-in, side by side (they mostly
 * wait on Debian's mirror); podman's layer cache makes a rebuild quick.
 */
export async function ensureStandIns(env: NodeJS.ProcessEnv): Promise<void> {
  await ensureDebianRoot(env);
  await podman(env, ['build', '-q', '-f', join(standInsDir, 'base.Containerfile'), '-t', `${BASE}:bookworm`, standInsDir], 'stand-ins');
  await Promise.all(Object.entries(STAND_INS).map(([name, containerfile]) => ensureStandIn(env, name, containerfile)));
}

async function ensureStandIn(env: NodeJS.ProcessEnv, name: string, containerfile: string): Promise<void> {
  if (await imageExists(env, name)) {
    const label = await podman(env, ['image', 'inspect', '--format', `{{index .Labels "${STAND_IN_LABEL}"}}`, name], 'stand-ins');
    if (label !== 'true') return;
  }
  const nodeMajor = /\/node:(\d+)-/.exec(name)?.[1];
  const context = nodeMajor ? await nodeContext(nodeMajor) : standInsDir;
  try {
    await podman(
      env,
      ['build', '-q', '--label', `${STAND_IN_LABEL}=true`, '-f', join(standInsDir, containerfile), '-t', name, context],
      `stand-in-${containerfile}`,
    );
  } finally {
    if (context !== standInsDir) rmSync(context, { recursive: true, force: true });
  }
}

/**
 * A node binary of `major` and this machine's npm, as the node stand-in's build context: this
 * machine's own node when it is that version, else one from the npm registry's `node` package
 * (kept under .data/, as CI keeps the ones it runs the tests on).
 */
async function nodeContext(major: string): Promise<string> {
  const ownNode = realpathSync(process.execPath);
  const npm = join(dirname(realpathSync(join(dirname(ownNode), 'npm'))), '..');
  const node = process.versions.node.split('.')[0] === major ? ownNode : await registryNode(major);
  if (!existsSync(join(npm, 'package.json'))) throw new Error(`npm was not found beside ${node}`);
  const context = mkdtempSync(join(tmpdir(), 'deeplink-node-stand-in-'));
  cpSync(node, join(context, 'node'));
  cpSync(npm, join(context, 'npm'), { recursive: true });
  return context;
}

/** The node binary of the registry's `node@<major>` package, installed under .data/node-<major>. */
async function registryNode(major: string): Promise<string> {
  const prefix = join(cacheDir, '..', `node-${major}`);
  const binary = join(prefix, 'node_modules', 'node', 'bin', 'node');
  if (!existsSync(binary)) {
    await run('npm', ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', `node@${major}`], {
      env: process.env,
      log: 'stand-ins',
    });
  }
  return realpathSync(binary);
}
