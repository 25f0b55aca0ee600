// The shared service runtime under faults, with servers of the test's own: readiness of all three
// services when Redis or PostgreSQL goes away, the outage log, and shutdown that a second signal
// does not cut short.
import { createDatabase } from '@deeplink/core/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rolledUpClicks } from '@deeplink/test-kit/clicks';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { logLines } from '@deeplink/test-kit/logs';
import { startPrimary, type PrivatePostgres } from '@deeplink/test-kit/private-postgres';
import { startPrivateRedis, type PrivateRedis } from '@deeplink/test-kit/private-redis';
import { startStack, type Stack } from '@deeplink/test-kit/stack';
import { UA } from '@deeplink/test-kit/user-agents';

const SERVICES = ['api', 'redirector', 'worker'] as const;

async function readiness(url: string): Promise<{ status: number; body: { status: string; checks: Record<string, string> } }> {
  const response = await fetch(`${url}/readyz`);
  return { status: response.status, body: (await response.json()) as { status: string; checks: Record<string, string> } };
}

async function register(apiUrl: string): Promise<string> {
  const response = await fetch(`${apiUrl}/api/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Ops', email: `ops-${Date.now()}@example.com`, password: 'ops password 1' }),
  });
  return ((await response.json()) as { data: { token: string } }).data.token;
}

async function createLink(apiUrl: string, token: string): Promise<{ id: string; url: string }> {
  const response = await fetch(`${apiUrl}/api/links`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ title: 'Faults', defaultUrl: 'https://example.com/faults' }),
  });
  return ((await response.json()) as { data: { link: { id: string; url: string } } }).data.link;
}

describe('readiness and the outage log, with private Redis and PostgreSQL', () => {
  let redis: PrivateRedis;
  let postgres: PrivatePostgres;
  let env: TestEnvironment;
  let stack: Stack;

  beforeAll(async () => {
    [redis, postgres] = await Promise.all([startPrivateRedis(), startPrimary()]);
    const admin = createDatabase(postgres.url(), { max: 1 });
    await admin.unsafe('CREATE DATABASE deeplink');
    await admin.end();
    env = await createTestEnvironment({ REDIS_URL: redis.url, DATABASE_URL: postgres.url('deeplink') });
    env.redis.on('error', () => {}); // this test's own connection sees the outage too
    stack = await startStack(env.env); // the API migrates the private database
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await env?.close();
    await redis?.kill();
    postgres?.destroy();
  });

  it('turns the API and the worker not ready while Redis is down, keeps the redirector ready, logs the outage once, and recovers', async () => {
    for (const name of SERVICES) expect((await readiness(stack.ops[name])).status, name).toBe(200);

    await redis.kill();
    for (const name of ['api', 'worker'] as const) {
      await expect
        .poll(() => readiness(stack.ops[name]), { timeout: 10_000 })
        .toMatchObject({ status: 503, body: { status: 'unavailable', checks: { redis: 'down', postgres: 'ok' } } });
    }
    // The redirector answers visitors from PostgreSQL and its cache, and spools clicks: still ready, the detail says why.
    await expect
      .poll(() => readiness(stack.ops.redirector), { timeout: 10_000 })
      .toMatchObject({ status: 200, body: { status: 'ok', checks: { redis: 'down', postgres: 'ok' } } });
    // The public listeners say so without the detail.
    expect((await fetch(`${stack.apiUrl}/readyz`)).status).toBe(503);
    expect(await (await fetch(`${stack.shortUrlBase}/readyz`)).json()).toEqual({ status: 'ok' });

    await redis.restart();
    for (const name of SERVICES) await expect.poll(async () => (await readiness(stack.ops[name])).status, { timeout: 15_000 }).toBe(200);

    for (const name of SERVICES) {
      const lines = logLines(stack[name].output);
      // ioredis errors on every reconnection attempt; the log says it once, and once when it is over.
      expect(
        lines.filter((line) => line.msg === 'Redis unreachable; reconnecting'),
        name,
      ).toHaveLength(1);
      await expect
        .poll(() => logLines(stack[name].output).filter((line) => line.msg === 'Redis reachable again').length, {
          timeout: 10_000,
          message: `${name}: ${JSON.stringify(logLines(stack[name].output).filter((line) => /Redis/.test(String(line.msg))))}`,
        })
        .toBe(1);
      expect(
        lines.filter((line) => line.level === 'error' && /redis|connect/i.test(JSON.stringify(line))),
        name,
      ).toEqual([]);
    }
  });

  it('turns the API and the worker not ready while PostgreSQL is down, and the redirector only once Redis is down too and it has no link cached', async () => {
    postgres.stop('immediate');
    for (const name of ['api', 'worker'] as const) {
      await expect
        .poll(() => readiness(stack.ops[name]), { timeout: 15_000 })
        .toMatchObject({ status: 503, body: { checks: { postgres: 'down', redis: 'ok' } } });
    }
    await expect
      .poll(() => readiness(stack.ops.redirector), { timeout: 15_000 })
      .toMatchObject({ status: 200, body: { checks: { postgres: 'down', redis: 'ok' } } });
    expect((await fetch(`${stack.shortUrlBase}/readyz`)).status).toBe(200);

    // Nothing left that could find a link: this redirector cannot answer a visitor.
    await redis.kill();
    await expect
      .poll(() => readiness(stack.ops.redirector), { timeout: 10_000 })
      .toMatchObject({
        status: 503,
        body: {
          status: 'unavailable',
          checks: { postgres: 'down', redis: 'down', accepting: 'ok', spool: 'ok' },
          detail: { cachedLinks: 0 },
        },
      });
    expect(await (await fetch(`${stack.shortUrlBase}/readyz`)).json()).toEqual({ status: 'unavailable' });
    await redis.restart(); // the clean-up deletes this test's keys
  });

  it('writes every log line in the shared format', () => {
    for (const name of SERVICES) {
      const lines = logLines(stack[name].output);
      expect(lines.length, name).toBeGreaterThan(2);
      for (const line of lines) {
        expect(line, name).toMatchObject({
          level: expect.stringMatching(/^(trace|debug|info|warn|error|fatal)$/),
          service: name,
          msg: expect.any(String),
        });
        expect(new Date(line.time as string).toISOString()).toBe(line.time);
      }
    }
  });
});

describe('shutdown with signals repeated', () => {
  let env: TestEnvironment;
  let stack: Stack;

  beforeAll(async () => {
    // A long flush interval and big batches: the clicks wait in the redirector until shutdown flushes them.
    env = await createTestEnvironment({
      RATE_LIMIT_MAX: '100000',
      RATE_LIMIT_AUTH_MAX: '1000',
      CLICK_FLUSH_MS: '60000',
      CLICK_BATCH_SIZE: '100000',
    });
    stack = await startStack(env.env);
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
    await env?.close();
  });

  it('flushes every click and finishes the batches in flight when SIGTERM comes twice', async () => {
    const link = await createLink(stack.apiUrl, await register(stack.apiUrl));
    let answered = 0;
    for (let i = 0; i < 10; i++) {
      const responses = await Promise.all(
        Array.from({ length: 30 }, () => fetch(link.url, { redirect: 'manual', headers: { 'user-agent': UA.windowsChrome } })),
      );
      answered += responses.filter((response) => response.status === 302).length;
    }
    expect(answered).toBe(300);

    // The second SIGTERM as soon as the first is being handled (as `npm start` and a terminal's
    // Ctrl-C together send them); identical signals sent at once would be merged by the kernel.
    await Promise.all(
      SERVICES.map(async (name) => {
        const service = stack[name];
        service.child.kill('SIGTERM');
        await expect.poll(() => logLines(service.output).some((line) => line.msg === 'shutting down')).toBe(true);
        service.child.kill('SIGTERM');
      }),
    );
    expect(await Promise.all([stack.redirector.exited, stack.worker.exited, stack.api.exited])).toEqual([0, 0, 0]);
    for (const name of SERVICES) expect(logLines(stack[name].output).at(-1), name).toMatchObject({ msg: 'stopped' });
    expect(logLines(stack.redirector.output)).toContainEqual(
      expect.objectContaining({ msg: 'clicks flushed', clicksFlushed: 300, clicksDropped: 0 }),
    );

    // Whatever the first worker had not finished is still queued: a new one counts it, once.
    const rest = await startStack(env.env);
    try {
      await expect.poll(() => rolledUpClicks(env.sql, link.id), { timeout: 20_000 }).toBe(300);
    } finally {
      await rest.stop();
    }
  });
});
