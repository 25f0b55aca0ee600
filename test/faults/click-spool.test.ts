// The redirector's click spool when its disk fails it, with a Redis server of the test's own: a
// spool that cannot be written at start, one that fills up mid-outage, clicks lost at shutdown, and
// what readiness says meanwhile. The disks are tmpfs mounts of the test's own (root only): a
// read-only one refuses writes even to root, a small one fills up.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  clickQueue,
  createLink,
  createUser,
  metric,
  queuedClicks,
  startRedirector,
  UA,
  visit,
  type RedirectorProcess,
} from '../../services/redirector/test/support.js';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { logLines } from '@deeplink/test-kit/logs';
import { startPrivateRedis, type PrivateRedis } from '@deeplink/test-kit/private-redis';
import { runToExit } from '@deeplink/test-kit/processes';

/** Everything a scenario started, stopped after it whatever happened. */
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const newDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

/** A tmpfs of its own at a new directory (`options` such as `size=128k` or `ro`), unmounted after the test. */
function mountTmpfs(options: string): string {
  const dir = newDir('deeplink-spool-disk-');
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir], { encoding: 'utf8' });
  if (mounted.status !== 0) throw new Error(`mount -t tmpfs -o ${options} failed (these tests need root): ${mounted.stderr}`);
  cleanups.push(() => spawnSync('umount', ['-l', dir]));
  return dir;
}

interface World {
  redis: PrivateRedis;
  env: TestEnvironment;
  redirector: RedirectorProcess;
  url: string;
}

/** A private Redis, a redirector on it with `overrides`, and one link, visited once so it is cached in-process. */
async function world(overrides: Record<string, string>): Promise<World> {
  const redis = await startPrivateRedis();
  cleanups.push(() => redis.kill());
  const env = await createTestEnvironment({ REDIS_URL: redis.url, LINK_CACHE_TTL_MS: '600000', ...overrides });
  env.redis.on('error', () => {}); // this test's own connection sees the outages too
  cleanups.push(async () => {
    // Its clean-up deletes the test's keys: on a Redis that answers, whatever the test left it in.
    await redis.kill();
    await redis.restart();
    await env.close();
  });
  const link = await createLink(env.sql, await createUser(env.sql), { defaultUrl: 'https://example.com/spool' });
  const redirector = await startRedirector(env.env);
  cleanups.push(() => redirector.stop());
  const url = `${redirector.url}/${link.code}`;
  expect((await go(url)).status).toBe(302);
  await expect.poll(() => metric(redirector.metricsUrl, 'redirector_clicks_flushed_total'), { timeout: 15_000 }).toBe(1);
  return { redis, env, redirector, url };
}

const go = (url: string) => visit(url, { 'user-agent': UA.windowsChrome });

/** Visits `url` from `concurrency` loops until `stop()` says so; returns the 302s. */
async function visitUntil(url: string, stop: () => boolean, concurrency = 4): Promise<number> {
  let redirects = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (!stop()) {
        const response = await go(url);
        await response.arrayBuffer();
        if (response.status === 302) redirects++;
      }
    }),
  );
  return redirects;
}

const readiness = async (base: string) => {
  const response = await fetch(`${base}/readyz`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

/** Bytes of the spool files on disk (the write check's probe is never left behind). */
const bytesOnDisk = (dir: string) => readdirSync(dir).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);

describe('a click spool its disk fails', () => {
  it('refuses to start on a spool directory that cannot be written, naming it', async () => {
    const env = await createTestEnvironment();
    cleanups.push(() => env.close());
    const file = join(newDir('deeplink-spool-file-'), 'not-a-directory');
    writeFileSync(file, '');
    // A read-only tmpfs refuses even root (chmod would not); a file where the directory should be, anyone.
    for (const dir of [mountTmpfs('ro,size=64k'), file]) {
      // Info level: the test reads why it stopped. A start takes seconds on a machine running other suites.
      const refused = await runToExit('redirector', {
        env: { ...env.env, REDIRECTOR_PORT: '0', LOG_LEVEL: 'info', CLICK_SPOOL_DIR: dir },
        timeoutMs: 60_000,
      });
      expect(refused.code, refused.output).toBe(1);
      const fatal = logLines(refused.output.split('\n')).find((line) => line.level === 'fatal');
      expect(fatal).toMatchObject({
        msg: expect.stringMatching(/^CLICK_SPOOL_DIR cannot be written; refusing to start/),
        dir,
        err: { code: expect.stringMatching(/^(EROFS|EEXIST|ENOTDIR)$/) },
      });
      expect(refused.output).not.toMatch(/"msg":"listening"/);
    }
  }, 150_000);

  it('exits 1 when a SIGTERM during a Redis outage leaves clicks neither queued nor spooled', async () => {
    // A spool that takes nothing (its limit is one byte): memory is all there is.
    const { redis, redirector, url } = await world({
      CLICK_SPOOL_DIR: newDir('deeplink-spool-'),
      CLICK_SPOOL_MAX_BYTES: '1',
      CLICK_BUFFER_MAX: '1000',
    });
    await redis.kill();
    for (let i = 0; i < 20; i++) expect((await go(url)).status).toBe(302);
    expect(await metric(redirector.metricsUrl, 'redirector_click_buffer_size')).toBe(20);
    expect(await redirector.stop()).toBe(1);
    const lines = logLines(redirector.output);
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 'error', msg: 'clicks neither queued nor spooled at shutdown', lost: 20 }),
    );
    expect(lines.at(-1)).toMatchObject({ msg: 'stopped' });
  }, 90_000);

  it('keeps its byte count true when the disk fills, says so, and replays every spool once Redis is back', async () => {
    const dir = mountTmpfs('size=16k'); // about 700 clicks
    const { redis, env, redirector, url } = await world({ CLICK_SPOOL_DIR: dir, CLICK_BATCH_SIZE: '20', CLICK_BUFFER_MAX: '300' });
    const queue = clickQueue(redis.url, env.config.QUEUE_PREFIX);
    queue.on('error', () => {});
    cleanups.push(() => queue.close());
    await redis.kill(); // and the warm-up click with it: this Redis keeps nothing

    // Visits until the disk is full and memory too, so that clicks are dropped.
    let dropped = 0;
    const watch = setInterval(
      () =>
        void metric(redirector.metricsUrl, 'redirector_clicks_dropped_total').then(
          (n) => (dropped = n),
          () => {},
        ),
      100,
    );
    const answered = await Promise.race([
      visitUntil(url, () => dropped > 0),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no click dropped within 60 s')), 60_000)),
    ]).finally(() => clearInterval(watch));
    dropped = await metric(redirector.metricsUrl, 'redirector_clicks_dropped_total');
    expect(dropped).toBeGreaterThan(0);

    // The count is what the disk holds: a write the full disk cut short was cut off again.
    expect(await metric(redirector.metricsUrl, 'redirector_click_spool_bytes')).toBe(bytesOnDisk(dir));
    expect(bytesOnDisk(dir)).toBeGreaterThan(0);
    expect(await metric(redirector.metricsUrl, 'redirector_click_spool_write_failures_total')).toBeGreaterThan(0);
    expect(await metric(redirector.metricsUrl, 'redirector_click_spooling')).toBe(1);
    expect(logLines(redirector.output)).toContainEqual(
      expect.objectContaining({
        level: 'error',
        msg: expect.stringMatching(/^click spool write failed/),
        err: expect.objectContaining({ code: 'ENOSPC' }),
      }),
    );
    // A disk that refuses the clicks it must take: this instance asks for no more visitors.
    expect(await readiness(redirector.metricsUrl)).toMatchObject({
      status: 503,
      body: {
        status: 'unavailable',
        checks: { redis: 'down', postgres: 'ok', accepting: 'ok', spool: 'down' },
        detail: { spooling: true },
      },
    });
    expect((await readiness(redirector.url)).status).toBe(503);

    // Every click answered and not dropped reaches the queue, once: memory, and the spool replayed.
    await redis.restart();
    await expect.poll(async () => (await queuedClicks(queue)).length, { timeout: 30_000, interval: 250 }).toBe(answered - dropped);
    await expect.poll(() => bytesOnDisk(dir), { timeout: 5_000 }).toBe(0);
    expect(await metric(redirector.metricsUrl, 'redirector_click_spool_bytes')).toBe(0);
    expect(await metric(redirector.metricsUrl, 'redirector_clicks_dropped_total')).toBe(dropped);
    // Nothing torn: the next batch after a cut-short write starts a line of its own.
    for (const line of logLines(redirector.output).filter((l) => l.msg === 'click queue reachable; spool replayed'))
      expect(line.setAsideLines).toBe(0);
    await expect.poll(async () => (await readiness(redirector.url)).status, { timeout: 5_000 }).toBe(200);

    // A later outage's few clicks are replayed as soon as Redis is back, without a restart.
    await redis.kill();
    const spooledBefore = await metric(redirector.metricsUrl, 'redirector_clicks_spooled_total');
    for (let i = 0; i < 3; i++) expect((await go(url)).status).toBe(302);
    await expect.poll(() => metric(redirector.metricsUrl, 'redirector_clicks_spooled_total'), { timeout: 20_000 }).toBe(spooledBefore + 3);
    await redis.restart();
    await expect.poll(async () => (await queuedClicks(queue)).length, { timeout: 20_000, interval: 250 }).toBe(3);
    await expect.poll(() => bytesOnDisk(dir), { timeout: 5_000 }).toBe(0);
  }, 180_000);

  it('stays ready through a Redis outage while it answers from its cache and spools, with the detail on the metrics listener', async () => {
    const dir = newDir('deeplink-spool-');
    const { redis, env, redirector, url } = await world({ CLICK_SPOOL_DIR: dir });
    const queue = clickQueue(redis.url, env.config.QUEUE_PREFIX);
    queue.on('error', () => {});
    cleanups.push(() => queue.close());
    await redis.kill();
    for (let i = 0; i < 10; i++) expect((await go(url)).status).toBe(302);
    await expect.poll(() => metric(redirector.metricsUrl, 'redirector_clicks_spooled_total'), { timeout: 20_000 }).toBe(10);

    expect(await readiness(redirector.url)).toEqual({ status: 200, body: { status: 'ok' } });
    const detail = await readiness(redirector.metricsUrl);
    expect(detail).toEqual({
      status: 200,
      body: {
        status: 'ok',
        checks: { redis: 'down', postgres: 'ok', accepting: 'ok', spool: 'ok' },
        detail: { spooling: true, spoolBytes: bytesOnDisk(dir), cachedLinks: 1 },
      },
    });
    expect(await metric(redirector.metricsUrl, 'deeplink_ready')).toBe(1);
    // Each scrape checks Redis again, with its own one-second budget.
    await expect.poll(() => metric(redirector.metricsUrl, 'deeplink_dependency_up', 'dependency="redis"'), { timeout: 5_000 }).toBe(0);
    expect(await metric(redirector.metricsUrl, 'redirector_click_spooling')).toBe(1);

    await redis.restart();
    await expect.poll(async () => (await queuedClicks(queue)).length, { timeout: 20_000, interval: 250 }).toBe(10);
    await expect.poll(() => metric(redirector.metricsUrl, 'redirector_click_spooling'), { timeout: 5_000 }).toBe(0);
    expect((await readiness(redirector.metricsUrl)).body).toMatchObject({
      status: 'ok',
      checks: { redis: 'ok' },
      detail: { spooling: false, spoolBytes: 0 },
    });
  }, 90_000);
});
