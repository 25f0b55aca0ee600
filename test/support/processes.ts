import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { join } from 'node:path';
import { bundleFlags, bundlePath } from '../../scripts/build.mjs';

const repoRoot = join(import.meta.dirname, '../..');

export type ServiceName = 'api' | 'redirector' | 'worker';

export interface ServiceProcess {
  child: ChildProcess;
  /** Every line the process printed so far, stdout and stderr together. */
  output: string[];
  /** The lines it printed on stderr alone. */
  errors: string[];
  /** Sends a signal (SIGTERM by default) and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  exited: Promise<number | null>;
}

/** A TCP port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const lines = (chunk: Buffer) => chunk.toString().split('\n').filter(Boolean);

/**
 * Runs a service as a real process with `env`. From its `bundle` (the default), the built
 * `services/<name>/dist/main.js` with plain node, as `npm start` and the Docker images do (the
 * test set-up builds the bundles; loading them costs a tenth of compiling the source through tsx,
 * about 0.6 s of CPU per start); from `source`, `services/<name>/src/main.ts` through tsx.
 */
export function spawnService(name: ServiceName, env: Record<string, string>, from: 'source' | 'bundle' = 'bundle'): ServiceProcess {
  const command =
    from === 'bundle'
      ? ['--enable-source-maps', ...bundleFlags(name), bundlePath(name)]
      : ['--import', 'tsx', join(repoRoot, 'services', name, 'src', 'main.ts')];
  const child = spawn(process.execPath, command, {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const errors: string[] = [];
  child.stdout!.on('data', (chunk: Buffer) => output.push(...lines(chunk)));
  child.stderr!.on('data', (chunk: Buffer) => {
    output.push(...lines(chunk));
    errors.push(...lines(chunk));
  });
  // 'close', not 'exit': it comes after the process's output has been read to the end.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return {
    child,
    output,
    errors,
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** spawnService, then resolves once `ready()` does; fails if the process exits first or after `timeoutMs`. */
export async function startService(
  name: ServiceName,
  env: Record<string, string>,
  ready: (output: string[]) => boolean | Promise<boolean>,
  timeoutMs = 20_000,
  from: 'source' | 'bundle' = 'bundle',
): Promise<ServiceProcess> {
  const service = spawnService(name, env, from);
  const deadline = Date.now() + timeoutMs;
  while (!(await Promise.resolve().then(() => ready(service.output)).catch(() => false))) {
    if (service.child.exitCode !== null) throw new Error(`${name} exited (${service.child.exitCode}) before it was ready:\n${service.output.join('\n')}`);
    if (Date.now() > deadline) {
      await service.stop('SIGKILL');
      throw new Error(`${name} was not ready within ${timeoutMs} ms:\n${service.output.join('\n')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return service;
}

/**
 * Runs a service expecting it to stop by itself (a configuration it refuses, say): resolves with
 * its exit code and every line it printed. Killed after `timeoutMs` if it does not.
 */
export async function runToExit(name: ServiceName, env: Record<string, string>, timeoutMs = 15_000): Promise<{ code: number | null; output: string }> {
  const service = spawnService(name, env);
  const timer = setTimeout(() => void service.stop('SIGKILL'), timeoutMs);
  const code = await service.exited;
  clearTimeout(timer);
  return { code, output: service.output.join('\n') };
}

/** A readiness check: GET {url}/healthz answers 200. */
export const healthy = (url: string) => async () => (await fetch(`${url}/healthz`)).ok;

/**
 * Resolves once `check` resolves true (polled every `intervalMs`); throws after `timeoutMs`. For
 * hooks and kit functions that hooks call, where expect.poll is not allowed; tests use expect.poll.
 */
export async function waitUntil(check: () => Promise<boolean> | boolean, timeoutMs: number, intervalMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
