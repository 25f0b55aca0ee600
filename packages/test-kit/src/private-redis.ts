import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort, waitUntil } from './processes.js';

/** A redis-server of a test's own on a spare port, which the test may kill and start again. */
export interface PrivateRedis {
  port: number;
  url: string;
  /** SIGKILL: a crash as far as clients can tell. */
  kill(): Promise<void>;
  /** Starts it again on the same port (after kill). */
  restart(): Promise<void>;
}

async function launch(port: number, args: string[]): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...args], { stdio: 'ignore' });
  const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => {}); // refused until the server is up
  try {
    await waitUntil(
      () =>
        probe.connect().then(
          () => probe.ping().then((pong) => pong === 'PONG'),
          () => false,
        ),
      10_000,
    );
  } finally {
    probe.disconnect();
  }
  return child;
}

/** Starts a memory-only redis-server (extra `args` such as `--appendonly yes` for other set-ups). */
export async function startPrivateRedis(args: string[] = ['--appendonly', 'no']): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined = await launch(port, args);
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async kill() {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      child = undefined;
    },
    async restart() {
      child = await launch(port, args);
    },
  };
}
