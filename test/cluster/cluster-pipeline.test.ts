// The whole product on a real Redis Cluster: six redis-server processes (three primaries, three
// replicas) made with `redis-cli --cluster create`, and the API, the redirector and the worker as
// real processes pointed at it with REDIS_CLUSTER_NODES. Every redirect must be counted exactly
// once, also when the primary holding the click queue is killed under load.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { CLICK_QUEUE, type Config, loadConfig, readEventStream, redisKeys } from '@deeplink/core';
import { createDatabase } from '@deeplink/core/db';
import { createRedis, duplicateRedis, getMany, reconcileLinkCache, type RedisClient, scanKeys, unlinkMany } from '@deeplink/core/redis';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { freePort, healthy, startProcess, type RunningProcess } from '@deeplink/test-kit/processes';
import { startRedisCluster, type PrivateRedisCluster } from '@deeplink/test-kit/redis-cluster';
import { UA } from '@deeplink/test-kit/user-agents';

let cluster: PrivateRedisCluster;
let env: TestEnvironment;
let config: Config;
let redis: RedisClient;
let api: RunningProcess;
let redirector: RunningProcess;
let worker: RunningProcess;
let apiUrl: string;
let shortUrlBase: string;
let token: string;

beforeAll(async () => {
  cluster = await startRedisCluster();
  env = await createTestEnvironment({ TRUST_PROXY: '1', RATE_LIMIT_MAX: '100000', RATE_LIMIT_AUTH_MAX: '5' });
  const [apiPort, redirectorPort] = [await freePort(), await freePort()];
  apiUrl = `http://127.0.0.1:${apiPort}`;
  shortUrlBase = `http://127.0.0.1:${redirectorPort}`;
  const vars = {
    ...env.env,
    REDIS_CLUSTER_NODES: cluster.nodes,
    LOG_LEVEL: 'info',
    SHORT_URL_BASE: shortUrlBase,
    API_PORT: String(apiPort),
    REDIRECTOR_PORT: String(redirectorPort),
    WORKER_PORT: '0',
    // Changed links must reach the redirector through the invalidation channel, not by expiry.
    LINK_CACHE_TTL_MS: '600000',
  };
  config = loadConfig(vars);
  redis = createRedis(config.REDIS_URL);
  api = await startProcess('api', { env: vars, ready: healthy(apiUrl) });
  [redirector, worker] = await Promise.all([
    startProcess('redirector', { env: vars, ready: healthy(shortUrlBase) }),
    startProcess('worker', { env: vars, ready: (output) => output.some((line) => /worker started/.test(line)) }),
  ]);
  const register = await fetch(`${apiUrl}/api/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': '10.0.0.1' },
    body: JSON.stringify({ name: 'Cluster', email: 'cluster@example.com', password: 'cluster password' }),
  });
  token = ((await register.json()) as { data: { token: string } }).data.token;
}, 120_000);

afterAll(async () => {
  await Promise.all([api?.stop(), redirector?.stop(), worker?.stop()]);
  redis?.disconnect();
  await env?.close();
  await cluster?.stop();
});

async function apiCall(method: string, path: string, body?: object): Promise<Response> {
  return fetch(`${apiUrl}/api${path}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    ...(body && { body: JSON.stringify(body) }),
  });
}

async function createLink(title: string): Promise<{ id: string; code: string }> {
  const response = await apiCall('POST', '/links', { title, defaultUrl: `https://example.com/${title}` });
  expect(response.status).toBe(201);
  const { link } = ((await response.json()) as { data: { link: { id: string; url: string } } }).data;
  return { id: link.id, code: link.url.split('/').pop()! };
}

const visit = (code: string) =>
  fetch(`${shortUrlBase}/${code}`, { redirect: 'manual', headers: { 'user-agent': UA.windowsChrome, 'x-forwarded-for': '8.8.8.8' } });

async function clicksOf(linkIds: string[]): Promise<number> {
  const [row] = await env.sql<
    { n: number }[]
  >`SELECT coalesce(sum(clicks), 0)::int AS n FROM click_daily WHERE link_id = ANY(${linkIds}::uuid[])`;
  return row!.n;
}

const slotOf = async (key: string) => Number(await redis.cluster('KEYSLOT', key));

describe('on a Redis Cluster', () => {
  let links: { id: string; code: string }[];

  it('counts every redirect exactly, with link keys spread over the primaries and the queue in one slot', async () => {
    links = [];
    for (let i = 0; i < 12; i++) links.push(await createLink(`c${i}`));
    let redirects = 0;
    for (const { code } of links) {
      for (let i = 0; i < 10; i++) if ((await visit(code)).status === 302) redirects++;
    }
    expect(redirects).toBe(120);
    await expect.poll(() => clicksOf(links.map((l) => l.id)), { timeout: 30_000 }).toBe(120);

    // The link cache: every link has its key, and the keys lie on more than one primary.
    const primaries = new Set<number>();
    for (const { code } of links) {
      expect(await redis.exists(`${config.REDIS_PREFIX}link:${code}`)).toBe(1);
      primaries.add(cluster.primaryOf(`${config.REDIS_PREFIX}link:${code}`));
    }
    expect(primaries.size).toBeGreaterThan(1);
    // The queue: its prefix carries a hash tag, and every key BullMQ made is in that one slot.
    expect(config.QUEUE_PREFIX).toBe(`{${env.env.QUEUE_PREFIX}}`);
    const queueKeys: string[] = [];
    for await (const page of scanKeys(redis, `${config.QUEUE_PREFIX}:*`)) queueKeys.push(...page);
    expect(queueKeys.length).toBeGreaterThan(2);
    const slots = new Set(await Promise.all(queueKeys.map(slotOf)));
    expect(slots).toEqual(new Set([await slotOf(config.QUEUE_PREFIX)]));
  }, 60_000);

  it('sends a changed link to the redirector through the invalidation channel', async () => {
    const { id, code } = links[0]!;
    expect((await visit(code)).headers.get('location')).toBe('https://example.com/c0');
    const response = await apiCall('PUT', `/links/${id}`, { title: 'c0', defaultUrl: 'https://example.com/changed' });
    expect(response.status).toBe(200);
    await expect.poll(async () => (await visit(code)).headers.get('location'), { timeout: 5_000 }).toBe('https://example.com/changed');
  });

  it('streams clicks to a live stream, and resumes one from the entries kept on the cluster', async () => {
    const link = await createLink('live');
    const { id: userId } = ((await (await apiCall('GET', '/auth/me')).json()) as { data: { user: { id: string } } }).data.user;
    const firstMessage = async (lastEventId?: string) => {
      const controller = new AbortController();
      const response = await fetch(`${apiUrl}/api/analytics/links/${link.id}/live`, {
        headers: { authorization: `Bearer ${token}`, ...(lastEventId && { 'last-event-id': lastEventId }) },
        signal: controller.signal,
      });
      expect(response.status).toBe(200);
      return {
        next: async () => {
          let message: { id?: string; data: string } | undefined;
          for await (const item of readEventStream(response.body as unknown as AsyncIterable<Uint8Array>)) {
            if ('event' in item) {
              message = item;
              break;
            }
          }
          controller.abort();
          if (!message) throw new Error('the stream ended without a message');
          return { id: message.id!, data: JSON.parse(message.data) as { clicks: number } };
        },
      };
    };
    const live = await firstMessage();
    expect((await visit(link.code)).status).toBe(302);
    const seen = await live.next();
    expect(seen.data.clicks).toBe(1);

    expect((await visit(link.code)).status).toBe(302);
    expect((await visit(link.code)).status).toBe(302);
    const history = redisKeys(config.REDIS_PREFIX).liveClicks(userId);
    await expect.poll(async () => (await redis.xrange(history, `(${seen.id}`, '+')).length, { timeout: 10_000 }).toBeGreaterThan(0);
    const resumed = await (await firstMessage(seen.id)).next();
    expect(resumed.id).not.toBe(seen.id);
    expect(resumed.data.clicks).toBeGreaterThanOrEqual(1);
  });

  it('reconciles the link cache across every primary: restores missing records, removes stray ones', async () => {
    const sql = createDatabase(config.DATABASE_URL, { max: 1 });
    try {
      const keys = redisKeys(config.REDIS_PREFIX);
      await unlinkMany(
        redis,
        links.slice(0, 6).map(({ code }) => keys.link(code)),
      );
      const strays = ['stray1', 'stray2', 'stray3', 'stray4'];
      for (const code of strays)
        await redis.set(
          keys.link(code),
          JSON.stringify({ id: '00000000-0000-4000-8000-000000000000', defaultUrl: 'https://gone.example' }),
        );
      const result = await reconcileLinkCache(sql, redis, keys);
      expect(result).toMatchObject({ restored: 6, removed: strays.length });
      expect(
        await getMany(
          redis,
          links.map(({ code }) => keys.link(code)),
        ),
      ).not.toContain(null);
      expect(
        await getMany(
          redis,
          strays.map((code) => keys.link(code)),
        ),
      ).toEqual(strays.map(() => null));
    } finally {
      await sql.end();
    }
  });

  it('enforces rate limits with counters on the cluster', async () => {
    const login = () =>
      fetch(`${apiUrl}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '10.0.0.2' },
        body: JSON.stringify({ email: 'cluster@example.com', password: 'cluster password' }),
      });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await login()).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  });

  it('loses and double-counts nothing when the primary holding the click queue is killed under load', async () => {
    const link = await createLink('failover');
    const victim = cluster.primaryOf(config.QUEUE_PREFIX);
    const primaryNow = () => {
      try {
        return cluster.primaryOf(config.QUEUE_PREFIX);
      } catch {
        return undefined; // the dead primary is suspected, not yet failed: no primary for the slot
      }
    };
    let redirects = 0;
    let failover: Promise<void> | undefined;
    let failedOver = false;
    let afterFailover = 0;
    // Kills the primary, then waits until its replica has taken over and the cluster is healthy.
    const failOver = async () => {
      await cluster.kill(victim);
      await expect.poll(() => [undefined, victim].includes(primaryNow()), { timeout: 30_000, interval: 200 }).toBe(false);
      await cluster.waitHealthy();
      failedOver = true;
    };
    const clients = Array.from({ length: 6 }, async () => {
      // Load before the kill, during the failover, and for 300 redirects after it.
      while (afterFailover < 300) {
        const response = await visit(link.code);
        expect(response.status).toBe(302);
        redirects++;
        if (failedOver) afterFailover++;
        if (redirects === 400) failover = failOver();
        // A failed failover would keep this loop going for ever.
        if (failover && !failedOver) await Promise.race([failover, new Promise((resolve) => setImmediate(resolve))]);
      }
    });
    await Promise.all(clients);
    await failover;

    // Batches whose completion the dead primary took with it are redelivered once their lock
    // expires (BullMQ's stalled-job check); their ids make the second delivery count nothing.
    // Usually seconds; batches whose writes failed during the failover wait out BullMQ's back-off
    // (1 s, doubling), which on a loaded machine has taken minutes.
    const queue = new Queue(CLICK_QUEUE, {
      connection: duplicateRedis(redis, { maxRetriesPerRequest: null }),
      prefix: config.QUEUE_PREFIX,
    });
    try {
      await expect
        .poll(() => clicksOf([link.id]), { timeout: 360_000, interval: 1000 })
        .toBe(redirects)
        .catch(async (error: unknown) => {
          // Where the missing clicks are: still in the queue, failed, or never queued.
          const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed', 'prioritized', 'waiting-children');
          const tail = (service: RunningProcess) => service.output.slice(-30).join('\n');
          const nodes = cluster.cli(cluster.primaryOf(config.QUEUE_PREFIX), 'CLUSTER', 'NODES');
          const [processed] =
            await env.sql`SELECT count(*)::int AS batches, coalesce(sum(clicks), 0)::int AS clicks FROM processed_batches`;
          const workerPort = /"healthPort":(\d+)/.exec(worker.output.join('\n'))?.[1];
          const workerMetrics = workerPort
            ? (await (await fetch(`http://127.0.0.1:${workerPort}/metrics`)).text())
                .split('\n')
                .filter((line) => /^worker_(batches|clicks)_processed_total/.test(line))
            : [];
          const redirectorMetrics = (redirector.output.join('\n').match(/"metricsPort":(\d+)/) ?? [])[1];
          const clickMetrics = redirectorMetrics
            ? (await (await fetch(`http://127.0.0.1:${redirectorMetrics}/metrics`)).text())
                .split('\n')
                .filter((line) => /^redirector_click/.test(line))
            : [];
          throw new Error(
            [
              String(error),
              `queue: ${JSON.stringify(counts)}`,
              `processed batches: ${JSON.stringify(processed)}`,
              ...workerMetrics,
              ...clickMetrics,
              'redirector:',
              tail(redirector),
              'worker:',
              tail(worker),
              'cluster:',
              nodes,
            ].join('\n'),
          );
        });
      await expect
        .poll(async () => Object.values(await queue.getJobCounts('waiting', 'active', 'delayed', 'failed')).reduce((a, b) => a + b, 0), {
          timeout: 90_000,
          interval: 1000,
        })
        .toBe(0);
    } finally {
      await queue.close();
    }
    // Nothing is left to deliver: the count stays exact.
    expect(await clicksOf([link.id])).toBe(redirects);
  }, 480_000);
});
