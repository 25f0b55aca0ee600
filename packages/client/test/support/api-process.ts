import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createTestEnvironment, type TestEnvironment } from '../../../../test/support/environment.js';

const repoRoot = join(import.meta.dirname, '../../../..');

export interface ApiProcess {
  /** `{base_url}`: the API's address including `/api`. */
  baseUrl: string;
  child: ChildProcess;
  /** Kills the process (SIGKILL: an abrupt outage) and waits until it is gone. */
  kill(): Promise<void>;
}

/** A port nobody listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

/** Starts the real API process (`node --import tsx services/api/src/main.ts`) and waits for /healthz. */
export async function startApi(env: Record<string, string>): Promise<ApiProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'services/api/src/main.ts'], {
    cwd: repoRoot,
    env: { ...process.env, ...env, API_HOST: '127.0.0.1', API_PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the API exited with code ${child.exitCode}: ${stderr}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the API did not become healthy within 30 s: ${stderr}`);
    }
    const healthy = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
    if (healthy) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    baseUrl: `http://127.0.0.1:${port}/api`,
    child,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** A private database and Redis prefix plus an API process on them; close() stops both. */
export async function startApiWithEnvironment(overrides: Record<string, string> = {}): Promise<{
  api: ApiProcess;
  environment: TestEnvironment;
  close(): Promise<void>;
}> {
  const environment = await createTestEnvironment({
    // Generous limits so only the tests that want a 429 see one.
    RATE_LIMIT_MAX: '100000',
    RATE_LIMIT_ANONYMOUS_MAX: '100000',
    RATE_LIMIT_AUTH_MAX: '100000',
    ...overrides,
  });
  let api: ApiProcess;
  try {
    api = await startApi(environment.env);
  } catch (error) {
    await environment.close();
    throw error;
  }
  return {
    api,
    environment,
    async close() {
      await api.kill();
      await environment.close();
    },
  };
}

let counter = 0;

/** Register input for a fresh account. */
export const newAccount = (name = 'Client Test') => ({
  name,
  email: `client${++counter}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`,
  password: 'correct horse battery',
});
