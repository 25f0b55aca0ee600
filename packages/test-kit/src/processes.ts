import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import net from 'node:net';
import { basename, join } from 'node:path';
import { bundleFlags, bundlePath, sourcePath } from '../../../scripts/build.mjs';

const repoRoot = join(import.meta.dirname, '../../..');

/**
 * What a process runs: a bundle of scripts/build.mjs by name (a service, or one of the bench's
 * comparison servers), or any entry file (`.js` with plain node, `.ts` through tsx).
 */
export type Program = string | { entry: string };

/** Everything about how a process runs, besides what it runs. */
export interface ProcessOptions {
  /** Its environment: these variables and PATH, nothing else (see spawnProcess). */
  env: Record<string, string | undefined>;
  /**
   * A named bundle runs from its built bundle with its node flags (the default), as `npm start` and
   * the Docker images do, or from its TypeScript source through tsx.
   */
  from?: 'bundle' | 'source';
  /** What errors (and the bench's report) call it: the bundle's name or the entry's file name by default. */
  name?: string;
  /** A `taskset -c` CPU list to pin it to, so a measurement does not share its cores. */
  cpus?: string;
  /** More node flags (e.g. --cpu-prof). */
  nodeArgs?: string[];
  /** A file that gets everything it prints, for post-mortems once it is gone. */
  logFile?: string;
  /** Called as soon as it exists, before it is ready, so that an interrupted start can still stop it. */
  onSpawn?: (started: RunningProcess) => void;
}

/** A process spawnProcess started. */
export interface RunningProcess {
  name: string;
  child: ChildProcess;
  /** Every line it printed so far, stdout and stderr together. */
  output: string[];
  /** The lines it printed on stderr alone. */
  errors: string[];
  /** Resolves with its exit code (null when a signal ended it) once its output has been read to the end. */
  exited: Promise<number | null>;
  /** Its peak resident set size so far (VmHWM), in bytes: the last one seen once it has exited. */
  peakRss(): number;
  /**
   * SIGTERM, then SIGKILL if it still runs after `graceMs` (15 s; 0 sends SIGKILL at once: a
   * crash as far as anyone can tell); resolves with its exit code. Does nothing once it has exited.
   */
  stop(graceMs?: number): Promise<number | null>;
}

/** Whether a process is ready yet; it is given every line the process printed so far. */
export type ReadyCheck = (output: string[]) => boolean | Promise<boolean>;

/** A TCP port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Current and peak resident set size of a process, in bytes, from /proc/<pid>/status; undefined once it is gone. */
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

/** The node arguments that run `program`. */
function nodeCommand(program: Program, from: 'bundle' | 'source'): string[] {
  if (typeof program !== 'string') {
    return [...(program.entry.endsWith('.ts') ? ['--import', 'tsx'] : ['--enable-source-maps']), program.entry];
  }
  return from === 'bundle'
    ? ['--enable-source-maps', ...bundleFlags(program), bundlePath(program)]
    : ['--import', 'tsx', sourcePath(program)];
}

const lines = (chunk: Buffer) => chunk.toString().split('\n').filter(Boolean);

/**
 * Runs `program` as a real process, as production runs it: from a bundle (the default for a named
 * bundle: the test set-up and the bench build them; loading one costs a tenth of compiling the
 * source through tsx, about 0.6 s of CPU per start) or from source.
 */
export function spawnProcess(program: Program, options: ProcessOptions): RunningProcess {
  const node = [process.execPath, ...(options.nodeArgs ?? []), ...nodeCommand(program, options.from ?? 'bundle')];
  const [command, ...args] = options.cpus ? ['taskset', '-c', options.cpus, ...node] : node;
  const child = spawn(command!, args, {
    cwd: repoRoot,
    // PATH and what the caller names only: the developer's own variables do not leak into a service under test or measurement.
    env: { PATH: process.env.PATH ?? '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = options.logFile ? createWriteStream(options.logFile) : undefined;
  const output: string[] = [];
  const errors: string[] = [];
  child.stdout!.on('data', (chunk: Buffer) => {
    log?.write(chunk);
    output.push(...lines(chunk));
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    log?.write(chunk);
    output.push(...lines(chunk));
    errors.push(...lines(chunk));
  });
  // 'close', not 'exit': it comes after the process's output has been read to the end. An 'error'
  // with no pid: it could not be started at all (no taskset, say), and says why.
  const exited = new Promise<number | null>((resolve) => {
    child.once('close', (code) => resolve(code));
    child.on('error', (error) => {
      output.push(error.message);
      errors.push(error.message);
      if (child.pid === undefined) resolve(null);
    });
  }).finally(() => log?.end());
  let gone = false;
  void exited.then(() => (gone = true));
  let peak = 0;
  const peakRss = () => {
    // Compared, not Math.max: an exited process not yet reaped has no VmHWM line (NaN).
    const seen = gone || child.pid === undefined ? undefined : readMemory(child.pid)?.peakRss;
    if (seen !== undefined && seen > peak) peak = seen;
    return peak;
  };
  const started: RunningProcess = {
    name: options.name ?? (typeof program === 'string' ? program : basename(program.entry)),
    child,
    output,
    errors,
    exited,
    peakRss,
    async stop(graceMs = 15_000) {
      if (gone) return exited;
      peakRss();
      child.kill(graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
      const timer = graceMs > 0 ? setTimeout(() => child.kill('SIGKILL'), graceMs) : undefined;
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
  options.onSpawn?.(started);
  return started;
}

/** The end of what a process printed, for an error message. */
const tail = (output: string[]) => output.slice(-60).join('\n');

/**
 * spawnProcess, then resolves once `ready` says so; fails with the end of its output if it exits
 * first or is not ready within `timeoutMs` (then it is stopped).
 */
export async function startProcess(
  program: Program,
  options: ProcessOptions & { ready: ReadyCheck; timeoutMs?: number },
): Promise<RunningProcess> {
  const started = spawnProcess(program, options);
  const { ready, timeoutMs = 30_000 } = options;
  let gone = false;
  void started.exited.then(() => (gone = true));
  const isReady = async () => {
    if (
      await Promise.resolve()
        .then(() => ready(started.output))
        .catch(() => false)
    )
      return true;
    if (gone) throw new Error(`${started.name} exited (${started.child.exitCode ?? started.child.signalCode}) before it was ready`);
    return false;
  };
  try {
    await waitUntil(isReady, timeoutMs, { intervalMs: 50, failure: `${started.name} was not ready` });
  } catch (error) {
    await started.stop(1000);
    throw new Error(`${(error as Error).message}:\n${tail(started.output)}`);
  }
  return started;
}

/**
 * Runs `program` expecting it to stop by itself (a configuration it refuses, say): resolves with
 * its exit code and every line it printed. Stopped after `timeoutMs` if it does not.
 */
export async function runToExit(
  program: Program,
  options: ProcessOptions & { timeoutMs?: number },
): Promise<{ code: number | null; output: string }> {
  const started = spawnProcess(program, options);
  const timer = setTimeout(() => void started.stop(), options.timeoutMs ?? 15_000);
  const code = await started.exited;
  clearTimeout(timer);
  return { code, output: started.output.join('\n') };
}

/** A readiness check: GET {url}/healthz answers 200. */
export const healthy = (url: string) => async () => (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) })).ok;

/**
 * A readiness check for a server with no /healthz (the bench's comparison servers): `url` answers
 * at all, whatever the status, without following a redirect.
 */
export const answers = (url: string) => async () => {
  await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(1000) });
  return true;
};

/**
 * Resolves once `check` resolves true (polled every `intervalMs`); throws `failure` after
 * `timeoutMs`, or what `check` throws. For hooks and kit functions that hooks call, where
 * expect.poll is not allowed; tests use expect.poll.
 */
export async function waitUntil(
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  { intervalMs = 100, failure = 'condition not met' }: { intervalMs?: number; failure?: string } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${failure} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
