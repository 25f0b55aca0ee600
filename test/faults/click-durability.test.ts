// No click lost, none counted twice, with faults injected into servers of the test's own: every
// scenario compares the redirects answered (302s) with totalClicks from the API.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { CLICK_BATCH_JOB, CLICK_QUEUE, packClickBatch } from '@deeplink/core';
import { createDatabase } from '@deeplink/core/db';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { logLines } from '@deeplink/test-kit/logs';
import { startPrimary, type PrivatePostgres } from '@deeplink/test-kit/private-postgres';
import { startPrivateRedis } from '@deeplink/test-kit/private-redis';
import { freePort, healthy, runToExit, startProcess, type RunningProcess } from '@deeplink/test-kit/processes';
import { startStack, type Stack } from '@deeplink/test-kit/stack';
import { holdTableLock } from '@deeplink/test-kit/table-lock';
import { sampleValue } from '@deeplink/test-kit/metrics';
import { UA } from '@deeplink/test-kit/user-agents';

/** Everything a scenario started, stopped after it whatever happened. */
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function account(stack: Stack): Promise<{ token: string; link: { id: string; url: string } }> {
  const post = async (path: string, body: object, token?: string) => {
    const response = await fetch(`${stack.apiUrl}/api${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
      body: JSON.stringify(body),
    });
    return ((await response.json()) as { data: Record<string, any> }).data;
  };
  const { token } = await post('/auth/register', {
    name: 'Faults',
    email: `faults-${Date.now()}@example.com`,
    password: 'faults password',
  });
  const { link } = await post('/links', { title: 'Viral', defaultUrl: 'https://example.com/viral' }, token);
  return { token, link };
}

/** Visits `urls` round-robin from `concurrency` loops until `until()` says stop; returns the 302s. */
async function visitWhile(urls: string[], until: () => boolean, concurrency = 8): Promise<number> {
  let redirects = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (!until()) {
        const url = urls[next++ % urls.length]!;
        try {
          const response = await fetch(url, { redirect: 'manual', headers: { 'user-agent': UA.windowsChrome } });
          await response.arrayBuffer();
          if (response.status === 302) redirects++;
        } catch {
          // a redirector being stopped refuses connections: not an answered visit
        }
      }
    }),
  );
  return redirects;
}
const visitFor = (urls: string[], ms: number) => {
  const end = Date.now() + ms;
  return visitWhile(urls, () => Date.now() >= end);
};

async function totalClicks(stack: Stack, token: string, linkId: string): Promise<number> {
  const response = await fetch(`${stack.apiUrl}/api/analytics/links/${linkId}`, { headers: { authorization: `Bearer ${token}` } });
  if (!response.ok) return -1;
  return ((await response.json()) as { data: { analytics: { totalClicks: number } } }).data.analytics.totalClicks;
}

interface World {
  env: TestEnvironment;
  stack: Stack;
  token: string;
  link: { id: string; url: string };
}

async function world(overrides: Record<string, string> = {}): Promise<World> {
  const env = await createTestEnvironment({ RATE_LIMIT_MAX: '100000', RATE_LIMIT_AUTH_MAX: '1000', ...overrides });
  env.redis.on('error', () => {});
  cleanups.push(() => env.close());
  const stack = await startStack(env.env);
  cleanups.push(() => stack.stop().catch(() => {}));
  return { env, stack, ...(await account(stack)) };
}

const startWorker = (env: Record<string, string>) =>
  startProcess('worker', {
    env: { ...env, WORKER_PORT: '0', LOG_LEVEL: 'info' },
    ready: (output) => logLines(output).some((line) => line.msg === 'worker started'),
  });

describe('click durability under faults', () => {
  it("recovers a killed worker's batches within 10 s and counts them once", async () => {
    const { env, stack, token, link } = await world();
    const queue = new Queue(CLICK_QUEUE, {
      connection: { url: env.env.REDIS_URL, maxRetriesPerRequest: null },
      prefix: env.env.QUEUE_PREFIX,
    });
    cleanups.push(() => queue.close());
    // Rollup writes wait behind a table lock, so the worker certainly holds batches when it dies.
    const lock = await holdTableLock(env.sql, 'click_hourly');
    const load = visitFor([link.url], 3_000);
    await expect.poll(() => queue.getActiveCount(), { timeout: 10_000 }).toBeGreaterThan(0);
    stack.worker.child.kill('SIGKILL');
    const killedAt = Date.now();
    await lock.release();
    const replacement = await startWorker(env.env);
    cleanups.push(() => replacement.stop());
    const answered = await load;
    // About 7 s on a quiet machine (a lock lasts 6 s, workers look every 3 s); the bound allows for
    // a busy one running other suites beside this.
    await expect
      .poll(() => totalClicks(stack, token, link.id), { timeout: 15_000 - (Date.now() - killedAt), interval: 100 })
      .toBe(answered);
    console.log(
      `worker kill -9 holding batches: ${answered} redirects, all counted ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill`,
    );
    expect(logLines(replacement.output)).toContainEqual(
      expect.objectContaining({ level: 'warn', msg: expect.stringMatching(/^stalled batches taken back/) }),
    );
  });

  it('goes on past a worker frozen mid-transaction: PostgreSQL cuts it off, the other worker takes its batches, each counts once', async () => {
    const FREEZE_MS = 20_000;
    const { env, stack, token, link } = await world();
    const redis = new Redis(env.env.REDIS_URL!);
    cleanups.push(() => redis.quit());
    const other = await startWorker(env.env);
    cleanups.push(() => other.stop());
    const frozen = stack.worker.child;
    cleanups.push(() => frozen.kill('SIGCONT')); // before the stack stops, or its SIGTERM would wait forever
    let done = false;
    const load = visitWhile([link.url], () => done);
    const rolledUp = async () =>
      Number((await env.sql<[{ clicks: number }]>`SELECT coalesce(sum(clicks), 0)::bigint AS clicks FROM click_hourly`)[0].clicks);
    await expect.poll(rolledUp, { timeout: 10_000 }).toBeGreaterThan(0);

    // Frozen with its statement sent: both workers' writes wait behind a table lock, the worker is
    // stopped, the lock released. Its statement then runs, and its transaction stays open, holding
    // the link's rows, with no one to send the COMMIT.
    const workerSessions = async (where: 'waiting' | 'holding') =>
      (
        await env.sql`
        SELECT 1 FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'deeplink-worker'
          AND ${
            where === 'waiting'
              ? env.sql`wait_event_type = 'Lock'`
              : env.sql`state = 'idle in transaction' AND backend_xid IS NOT NULL AND now() - state_change > interval '300 ms'`
          }`
      ).length;
    let caught = false;
    for (let attempt = 0; attempt < 5 && !caught; attempt++) {
      const lock = await holdTableLock(env.sql, 'click_hourly');
      for (const end = Date.now() + 5_000; Date.now() < end && (await workerSessions('waiting')) < 2; )
        await new Promise((resolve) => setTimeout(resolve, 100));
      frozen.kill('SIGSTOP');
      await lock.release();
      await new Promise((resolve) => setTimeout(resolve, 600));
      caught = (await workerSessions('holding')) > 0;
      if (!caught) frozen.kill('SIGCONT');
    }
    expect(caught, 'the worker was never frozen inside a transaction').toBe(true);

    // While it is frozen: how long the rollups stood still, and the most batches waiting, against
    // the batches queued meanwhile (the job id counter).
    const queued = async () => Number(await redis.get(`${env.env.QUEUE_PREFIX}:${CLICK_QUEUE}:id`));
    const frozenAt = Date.now();
    const queuedBefore = await queued();
    let [last, lastChange, longestStall, mostWaiting] = [await rolledUp(), frozenAt, 0, 0];
    while (Date.now() - frozenAt < FREEZE_MS) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const [now, waiting] = [await rolledUp(), await redis.llen(`${env.env.QUEUE_PREFIX}:${CLICK_QUEUE}:wait`)];
      if (now !== last) [last, lastChange] = [now, Date.now()];
      longestStall = Math.max(longestStall, Date.now() - lastChange);
      mostWaiting = Math.max(mostWaiting, waiting);
    }
    const queuedPerSecond = ((await queued()) - queuedBefore) / ((Date.now() - frozenAt) / 1000);
    frozen.kill('SIGCONT');
    done = true;
    const answered = await load;
    const thawedAt = Date.now();
    console.log(
      `worker frozen ${FREEZE_MS / 1000} s: rollups stood still ${(longestStall / 1000).toFixed(1)} s at most, ${mostWaiting} batches waiting at most (${queuedPerSecond.toFixed(1)} queued/s)`,
    );
    // About an interval (3 s) on a quiet machine, until PostgreSQL cuts the frozen worker's session
    // off; without the cut, the whole freeze. The bounds leave room for a busy machine.
    expect(longestStall).toBeLessThan(FREEZE_MS / 2);
    expect(mostWaiting).toBeLessThan(queuedPerSecond * (FREEZE_MS / 2 / 1000));
    await expect.poll(() => totalClicks(stack, token, link.id), { timeout: 30_000, interval: 250 }).toBe(answered);
    console.log(`all ${answered} clicks counted ${((Date.now() - thawedAt) / 1000).toFixed(1)} s after the thaw`);
    // Its batches came back when their locks expired, and were said to.
    expect(logLines(other.output)).toContainEqual(expect.objectContaining({ msg: expect.stringMatching(/^stalled batches taken back/) }));
  }, 180_000);

  it('loses no batch waiting in the queue when Redis (AOF) is killed and restarted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'deeplink-redis-aof-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const redis = await startPrivateRedis([
      '--appendonly',
      'yes',
      '--appendfsync',
      'everysec',
      '--maxmemory-policy',
      'noeviction',
      '--dir',
      dir,
    ]);
    cleanups.push(() => redis.kill());
    const { env, stack, token, link } = await world({ REDIS_URL: redis.url, REQUIRE_DURABLE_REDIS: '1' });
    await stack.worker.stop(); // a backlog builds up
    const answered = await visitFor([link.url], 2_000);
    await expect
      .poll(async () =>
        (await fetch(`${stack.ops.redirector}/metrics`)).text().then((text) => /redirector_click_buffer_size\{[^}]*\} 0$/m.test(text)),
      )
      .toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // past the once-a-second fsync
    await redis.kill();
    await redis.restart();
    const worker = await startWorker(env.env);
    cleanups.push(() => worker.stop());
    await expect.poll(() => totalClicks(stack, token, link.id), { timeout: 20_000, interval: 250 }).toBe(answered);
  });

  it('spools clicks to disk when Redis is down, keeps them through a SIGTERM, and replays them at the next start', async () => {
    const redis = await startPrivateRedis();
    cleanups.push(() => redis.kill());
    const spoolDir = mkdtempSync(join(tmpdir(), 'deeplink-spool-'));
    cleanups.push(() => rmSync(spoolDir, { recursive: true, force: true }));
    const { env, stack, token, link } = await world({
      REDIS_URL: redis.url,
      CLICK_SPOOL_DIR: spoolDir,
      CLICK_BUFFER_MAX: '1000',
      CLICK_SPOOL_READY_MAX_BYTES: '10000',
    });
    let answered = await visitFor([link.url], 1_000);
    // This Redis keeps nothing on disk: a batch still waiting in its queue when it is killed would
    // be gone with it, which is the volatile set-up's loss, not the spool's. So the queue is empty first.
    await expect.poll(() => totalClicks(stack, token, link.id), { timeout: 30_000, interval: 250 }).toBe(answered);
    await redis.kill();
    // From the LRU, while the queue is away, for at least 2 s and until the spool is past its
    // readiness threshold (a slow machine answers fewer visits in 2 s): more than CLICK_BUFFER_MAX.
    const spoolCheck = async () =>
      ((await (await fetch(`${stack.ops.redirector}/readyz`)).json()) as { checks: Record<string, string> }).checks.spool;
    let spoolDown = false;
    const started = Date.now();
    const watching = (async () => {
      while (!spoolDown && Date.now() - started < 20_000) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        spoolDown = (await spoolCheck()) === 'down';
      }
    })();
    answered += await visitWhile([link.url], () => (spoolDown && Date.now() - started >= 2_000) || Date.now() - started >= 20_000);
    await watching;
    // A spool past its threshold: this redirector asks the load balancer for no more traffic.
    expect(await spoolCheck()).toBe('down');
    expect(await stack.redirector.stop()).toBe(0);
    const lines = logLines(stack.redirector.output);
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'clicks flushed', clicksDropped: 0 }));
    expect(readdirSync(spoolDir).length).toBeGreaterThan(0);

    await redis.restart();
    const port = new URL(stack.shortUrlBase).port;
    const again = await startProcess('redirector', {
      env: { ...env.env, LOG_LEVEL: 'info', REDIRECTOR_PORT: port, REDIRECTOR_METRICS_PORT: '0' },
      ready: healthy(stack.shortUrlBase),
    });
    cleanups.push(() => again.stop());
    await expect.poll(() => totalClicks(stack, token, link.id), { timeout: 60_000, interval: 250 }).toBe(answered);
    expect(logLines(again.output)).toContainEqual(expect.objectContaining({ msg: 'click queue reachable; spool replayed' }));
    await expect.poll(() => readdirSync(spoolDir).filter((name) => name.endsWith('.jsonl')).length).toBe(0);
  }, 120_000);

  it('counts every click once after PostgreSQL was stopped for 20 s under load', async () => {
    const postgres: PrivatePostgres = await startPrimary();
    cleanups.push(() => postgres.destroy());
    const admin = createDatabase(postgres.url(), { max: 1 });
    await admin.unsafe('CREATE DATABASE deeplink');
    await admin.end();
    const { stack, token, link } = await world({ DATABASE_URL: postgres.url('deeplink') });
    const load = visitFor([link.url], 24_000);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    postgres.stop('immediate');
    await new Promise((resolve) => setTimeout(resolve, 20_000));
    postgres.restart();
    const answered = await load;
    expect(answered).toBeGreaterThan(0);
    await expect.poll(() => totalClicks(stack, token, link.id), { timeout: 60_000, interval: 500 }).toBe(answered);
  }, 120_000);

  it('counts exactly with two redirectors and two workers', async () => {
    const { env, stack, token, link } = await world();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const [redirector, worker]: [RunningProcess, RunningProcess] = await Promise.all([
      startProcess('redirector', { env: { ...env.env, REDIRECTOR_PORT: String(port), REDIRECTOR_METRICS_PORT: '0' }, ready: healthy(url) }),
      startWorker(env.env),
    ]);
    cleanups.push(
      () => redirector.stop(),
      () => worker.stop(),
    );
    const code = new URL(link.url).pathname;
    const answered = await visitFor([link.url, `${url}${code}`], 3_000);
    await expect.poll(() => totalClicks(stack, token, link.id), { timeout: 20_000, interval: 250 }).toBe(answered);
  });

  it('fails a poison batch at once and goes on with the others', async () => {
    const { env, stack, token, link } = await world();
    const queue = new Queue(CLICK_QUEUE, {
      connection: { url: env.env.REDIS_URL, maxRetriesPerRequest: null },
      prefix: env.env.QUEUE_PREFIX,
    });
    cleanups.push(() => queue.close());
    const redis = new Redis(env.env.REDIS_URL!);
    cleanups.push(() => redis.quit());
    // Jobs whose stored data or options are not JSON: added delayed, then overwritten before they are due.
    const poison = await queue.add(CLICK_BATCH_JOB, {}, { delay: 1_000, jobId: 'poison-1' });
    await redis.hset(`${env.env.QUEUE_PREFIX}:${CLICK_QUEUE}:${poison.id}`, 'data', '{"batchId": "poison-1", clicks: [');
    const readableClicks = packClickBatch({
      batchId: 'poison-opts',
      clicks: [{ linkId: link.id, ts: Date.now(), ip: '203.0.113.9', userAgent: UA.windowsChrome, referrer: '' }],
    });
    const badOptions = await queue.add(CLICK_BATCH_JOB, readableClicks, { delay: 1_000, jobId: 'poison-opts' });
    await redis.hset(`${env.env.QUEUE_PREFIX}:${CLICK_QUEUE}:${badOptions.id}`, 'opts', '{"attempts": 10, backoff');
    const wrongShape = await queue.add(CLICK_BATCH_JOB, { hello: 'world', ip: '203.0.113.9' });
    // getFailed reads every job's options too: the failed set stays readable.
    await expect
      .poll(async () => (await queue.getFailed()).map((job) => job.id).sort(), { timeout: 10_000 })
      .toEqual([poison.id, badOptions.id, wrongShape.id].sort());
    for (const job of await queue.getFailed()) {
      expect(job.failedReason).toMatch(/^poison:/);
      expect(JSON.stringify(job.data)).not.toContain('203.0.113.9'); // kept for inspection without addresses
    }
    expect((await queue.getJob(badOptions.id!))?.data).toMatchObject({ batchId: 'poison-opts' });
    expect((await fetch(`${stack.ops.worker}/readyz`)).status).toBe(200);
    const clean = packClickBatch({
      batchId: 'after-poison',
      clicks: [{ linkId: link.id, ts: Date.now(), ip: '198.51.100.1', userAgent: UA.windowsChrome, referrer: '' }],
    });
    await queue.add(CLICK_BATCH_JOB, clean);
    await expect.poll(() => totalClicks(stack, token, link.id), { timeout: 10_000 }).toBe(1);
    expect(logLines(stack.worker.output).filter((line) => line.level === 'error')).toHaveLength(3);
  });
});

describe('what a redirector kill -9 can lose', () => {
  it('is the clicks of the last flush interval or so, and nothing once they are queued', async () => {
    const { stack, token, link } = await world();
    const started = Date.now();
    let killed = false;
    const load = visitWhile([link.url], () => killed);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    stack.redirector.child.kill('SIGKILL');
    killed = true;
    const answered = await load;
    const seconds = (Date.now() - started) / 1000;
    // Wait until the worker has rolled up whatever reached the queue.
    let counted = -1;
    await expect
      .poll(
        async () => {
          const before = counted;
          counted = await totalClicks(stack, token, link.id);
          return counted === before && counted > 0;
        },
        { timeout: 20_000, interval: 1_000 },
      )
      .toBe(true);
    const lost = answered - counted;
    const rate = answered / seconds;
    console.log(
      `redirector kill -9 at ${Math.round(rate)} redirects/s: ${lost} of ${answered} clicks lost, ${((lost / rate) * 1000).toFixed(0)} ms of traffic`,
    );
    expect(lost).toBeGreaterThanOrEqual(0);
    // At most CLICK_FLUSH_MS (50 ms) waiting to be sealed plus a write in flight; a busy machine gets slack.
    expect(lost).toBeLessThanOrEqual(Math.ceil(rate * 0.5));
  });
});

describe('the Redis the queue needs', () => {
  it('is checked at start: a warning on a Redis without AOF, a refusal with REQUIRE_DURABLE_REDIS=1', async () => {
    const redis = await startPrivateRedis(['--appendonly', 'no', '--maxmemory-policy', 'allkeys-lru']);
    cleanups.push(() => redis.kill());
    const env = await createTestEnvironment({ REDIS_URL: redis.url });
    cleanups.push(() => env.close());
    const warned = await startWorker(env.env);
    cleanups.push(() => warned.stop());
    await expect
      .poll(() => logLines(warned.output).find((line) => line.level === 'warn' && /could lose batches/.test(String(line.msg))))
      .toMatchObject({
        problems: ['appendonly is no (the queue needs yes)', 'maxmemory-policy is allkeys-lru (the queue needs noeviction)'],
      });

    // Under `npm start` the launcher says it once: the services keep it to debug.
    const noted = await startProcess('worker', {
      env: { ...env.env, WORKER_PORT: '0', LOG_LEVEL: 'debug', QUEUE_DURABILITY_NOTED: '1' },
      ready: (output) => logLines(output).some((line) => line.msg === 'worker started'),
    });
    cleanups.push(() => noted.stop());
    await expect
      .poll(() => logLines(noted.output).find((line) => /could lose batches/.test(String(line.msg))))
      .toMatchObject({ level: 'debug' });

    const port = await freePort();
    const refused = await runToExit('redirector', {
      env: { ...env.env, LOG_LEVEL: 'info', REDIRECTOR_PORT: String(port), REDIRECTOR_METRICS_PORT: '0', REQUIRE_DURABLE_REDIS: '1' },
    });
    expect(refused.code, refused.output).toBe(1);
    expect(refused.output).toMatch(/refusing to run on this Redis/);
  });

  it('is required in production: both services refuse a Redis without AOF unless ALLOW_VOLATILE_REDIS=1, which every start logs', async () => {
    const redis = await startPrivateRedis(['--appendonly', 'no', '--maxmemory-policy', 'noeviction']);
    cleanups.push(() => redis.kill());
    const env = await createTestEnvironment({ REDIS_URL: redis.url });
    cleanups.push(() => env.close());
    const production = { ...env.env, NODE_ENV: 'production', LOG_LEVEL: 'info' };
    const port = await freePort();
    for (const service of ['worker', 'redirector']) {
      const refused = await runToExit(service, {
        env: { ...production, WORKER_PORT: '0', REDIRECTOR_PORT: String(port), REDIRECTOR_METRICS_PORT: '0' },
      });
      expect(refused.code, refused.output).toBe(1);
      expect(refused.output).toMatch(/refusing to run on this Redis/);
      expect(refused.output).toMatch(/appendonly is no .*NODE_ENV is production; ALLOW_VOLATILE_REDIS=1 starts anyway/);
    }

    const allowed = await startWorker({ ...production, ALLOW_VOLATILE_REDIS: '1' });
    cleanups.push(() => allowed.stop());
    await expect
      .poll(() => logLines(allowed.output).find((line) => /^ALLOW_VOLATILE_REDIS is set/.test(String(line.msg))))
      .toMatchObject({
        level: 'warn',
        problems: ['appendonly is no (the queue needs yes)'],
      });
    expect(logLines(allowed.output).filter((line) => line.level === 'fatal')).toEqual([]);
  });

  it('is watched: a Redis that comes back empty is logged with the batches lost and counted for the alert', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'deeplink-redis-aof-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const redis = await startPrivateRedis([
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
      '--maxmemory-policy',
      'noeviction',
      '--dir',
      dir,
    ]);
    cleanups.push(() => redis.kill());
    const env = await createTestEnvironment({ REDIS_URL: redis.url, WORKER_STALL_INTERVAL_MS: '500' });
    env.redis.on('error', () => {});
    cleanups.push(() => env.close());
    const worker = await startWorker(env.env);
    cleanups.push(() => worker.stop());
    const port = logLines(worker.output).find((line) => line.msg === 'worker started')!.healthPort;
    const lostMetric = async () =>
      sampleValue(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text(), 'worker_queue_batches_lost_total');
    expect(await lostMetric()).toBe(0);
    const queue = new Queue(CLICK_QUEUE, { connection: { url: redis.url, maxRetriesPerRequest: null }, prefix: env.env.QUEUE_PREFIX });
    queue.on('error', () => {});
    cleanups.push(() => queue.close());
    /** Batches due in an hour: they wait in Redis, held by no worker. */
    const addLater = (ids: string[]) =>
      queue.addBulk(
        ids.map((batchId) => ({ name: CLICK_BATCH_JOB, data: packClickBatch({ batchId, clicks: [] }), opts: { delay: 3_600_000 } })),
      );
    const lookTwice = () => new Promise((resolve) => setTimeout(resolve, 1_500)); // the worker looks every 500 ms

    // A restart from the append-only file keeps the batches: nothing to report.
    await addLater(['kept-1', 'kept-2']);
    await lookTwice();
    await redis.kill();
    await redis.restart();
    await lookTwice();
    expect(await queue.getDelayedCount()).toBe(2);
    expect(await lostMetric()).toBe(0);

    // A restart without it (the file removed meanwhile) keeps nothing: the five batches waiting are lost.
    await addLater(['lost-1', 'lost-2', 'lost-3']);
    await lookTwice();
    await redis.kill();
    for (const entry of readdirSync(dir)) rmSync(join(dir, entry), { recursive: true, force: true });
    await redis.restart();
    await expect.poll(lostMetric, { timeout: 10_000 }).toBe(5);
    expect(await queue.getDelayedCount()).toBe(0);
    expect(logLines(worker.output).filter((line) => line.level === 'error' && /came back empty/.test(String(line.msg)))).toEqual([
      expect.objectContaining({ batchesLost: 5 }),
    ]);
  });
});
