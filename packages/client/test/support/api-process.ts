import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { freePort, healthy, startProcess, type RunningProcess } from '@deeplink/test-kit/processes';

export interface ApiProcess {
  /** `{base_url}`: the API's address including `/api`. */
  baseUrl: string;
  service: RunningProcess;
  /** Kills the process (SIGKILL: an abrupt outage) and waits until it is gone. */
  kill(): Promise<void>;
}

/** Starts the real API process on a spare port and waits for /healthz. */
export async function startApi(env: Record<string, string>): Promise<ApiProcess> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const service = await startProcess('api', { env: { ...env, API_HOST: '127.0.0.1', API_PORT: String(port) }, ready: healthy(origin) });
  return {
    baseUrl: `${origin}/api`,
    service,
    async kill() {
      await service.stop(0);
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
