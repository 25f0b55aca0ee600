import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { buildApi } from '../src/app.js';
import { createLogger } from '@deeplink/core/runtime';
import { createDatabase } from '@deeplink/core/db';

export interface ApiHarness {
  app: FastifyInstance;
  env: TestEnvironment;
  /** Every log line the API wrote, when created with captureLogs. */
  logs: string[];
  request(options: InjectOptions & { token?: string }): Promise<LightMyRequestResponse & { body: string; json(): any }>;
  /** Registers a fresh user; returns its id, token and email. */
  registerUser(name?: string): Promise<{ id: string; token: string; email: string; password: string }>;
  /** A second API instance on the same database and Redis prefix, as behind a load balancer; close it before this one. */
  sibling(): Promise<ApiHarness>;
  close(): Promise<void>;
}

let counter = 0;

/** A real API (Fastify inject, real Redis and PostgreSQL) on a private database and Redis prefix. */
export async function createApiHarness(
  options: { env?: Record<string, string>; captureLogs?: boolean; dashboardDir?: string; now?: () => number } = {},
): Promise<ApiHarness> {
  const env = await createTestEnvironment({
    // Generous limits so only the rate-limit tests ever see a 429.
    RATE_LIMIT_MAX: '100000',
    RATE_LIMIT_ANONYMOUS_MAX: '100000',
    RATE_LIMIT_AUTH_MAX: '100000',
    APP_RATE_LIMIT_MAX: '100000',
    APP_RATE_LIMIT_ADDRESS_MAX: '100000',
    ...options.env,
  });
  return harnessOn(env, options, () => env.close());
}

/** An API app on `env`; `release` runs after the app is closed. */
async function harnessOn(
  env: TestEnvironment,
  options: { captureLogs?: boolean; dashboardDir?: string; now?: () => number },
  release: () => Promise<void>,
): Promise<ApiHarness> {
  const logs: string[] = [];
  const subscriber = env.redis.duplicate();
  const exportSql = createDatabase(env.config.DATABASE_URL, {
    max: env.config.DATABASE_EXPORT_POOL_MAX,
    applicationName: 'deeplink-api-export',
  });
  const app = await buildApi({
    config: env.config,
    sql: env.sql,
    exportSql,
    redis: env.redis,
    subscriber,
    logger: options.captureLogs ? createLogger('api', 'trace', { write: (line: string) => void logs.push(line) }) : undefined,
    dashboardDir: options.dashboardDir,
    now: options.now,
  });
  await app.ready();

  const harness: ApiHarness = {
    app,
    env,
    logs,
    async request({ token, headers, ...rest }) {
      const response = await app.inject({
        ...rest,
        headers: { ...headers, ...(token && { authorization: `Bearer ${token}` }) },
      });
      return response;
    },
    async registerUser(name = 'Test User') {
      const email = `user${++counter}-${Date.now()}@example.com`;
      const password = 'correct horse battery';
      const response = await harness.request({ method: 'POST', url: '/api/auth/register', payload: { name, email, password } });
      if (response.statusCode !== 201) throw new Error(`register failed: ${response.body}`);
      const { user, token } = response.json().data;
      return { id: user.id, token, email, password };
    },
    sibling: () => harnessOn(env, options, async () => {}),
    async close() {
      await app.close();
      subscriber.disconnect();
      await exportSql.end({ timeout: 5 });
      await release();
    },
  };
  return harness;
}

/** A harness with one user and one link of theirs, for a describe block's beforeAll; close `api` after. */
export async function harnessWithLink(): Promise<{ api: ApiHarness; token: string; linkId: string }> {
  const api = await createApiHarness();
  const { token } = await api.registerUser();
  const created = await api.request({
    method: 'POST',
    url: '/api/links',
    token,
    payload: { title: 'Link', defaultUrl: 'https://example.com/' },
  });
  return { api, token, linkId: created.json().data.link.id };
}

/** A link of the user (a title and a default URL, and `fields`); returns its id, short code and short URL. */
export async function createLinkOf(
  api: ApiHarness,
  token: string,
  fields: Record<string, unknown> = {},
): Promise<{ id: string; url: string; code: string }> {
  const response = await api.request({
    method: 'POST',
    url: '/api/links',
    token,
    payload: { title: 'Spring', defaultUrl: 'https://shop.example.com/spring', ...fields },
  });
  if (response.statusCode !== 201) throw new Error(`link creation failed: ${response.body}`);
  const { id, url } = response.json().data.link as { id: string; url: string };
  return { id, url, code: new URL(url).pathname.slice(1) };
}
