// An upgrade to a release that writes a new click batch format: batches the current release's
// redirector wrote (left in the queue, in the failed set, and in its spool while Redis was away)
// are each counted exactly once by the next release, whose registry writes `packed-3` and keeps
// reading `packed-2` (and `packed-1`) (packages/test-kit/src/next-batch-format.ts). The Redis server is the test's own, with
// an append-only file, so that it can be taken down and come back with the queue it held.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UnrecoverableError, Worker } from 'bullmq';
import { CLICK_BATCH_JOB, CLICK_QUEUE, POISON_REASON, readClickJob, redisKeys } from '@deeplink/core';
import type { Sql } from '@deeplink/core/db';
import { afterEach, describe, expect, it } from 'vitest';
import { createClickBuffer } from '../../services/redirector/src/click-buffer.js';
import { createClickSpool, SET_ASIDE_FILE } from '../../services/redirector/src/click-spool.js';
import { Metrics } from '../../services/redirector/src/metrics.js';
import { clickQueue, createLink, createUser, metric, startRedirector, UA, visit } from '../../services/redirector/test/support.js';
import { createWorker } from '../../services/worker/src/app.js';
import { retryFailedBatches } from '../../services/worker/src/maintenance.js';
import { waitForIdle } from '@deeplink/test-kit/clicks';
import { createTestEnvironment } from '@deeplink/test-kit/environment';
import { capturingLogger } from '@deeplink/test-kit/logs';
import { NEXT_RELEASE_FORMATS, PACKED_3 } from '@deeplink/test-kit/next-batch-format';
import { startPrivateRedis } from '@deeplink/test-kit/private-redis';

/** Everything the scenario started, stopped after it whatever happened. */
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const newDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

/** `count` visits to `url`, each answered with a redirect. */
async function redirects(url: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const response = await visit(url, { 'user-agent': UA.windowsChrome });
    expect(response.status).toBe(302);
  }
}

/** A link's clicks in the hourly and in the daily rollups. */
async function rolledUp(sql: Sql, linkId: string): Promise<{ hourly: number; daily: number }> {
  const [row] = await sql<{ hourly: number; daily: number }[]>`
    SELECT (SELECT coalesce(sum(clicks), 0)::int FROM click_hourly WHERE link_id = ${linkId}) AS hourly,
           (SELECT coalesce(sum(clicks), 0)::int FROM click_daily WHERE link_id = ${linkId}) AS daily`;
  return row!;
}

describe('an upgrade to a new click batch format', () => {
  it('counts exactly the batches this release left in the queue, the failed set and the spool', async () => {
    // Every write on disk before Redis answers it: a SIGKILL loses nothing the queue had.
    const redis = await startPrivateRedis(['--appendonly', 'yes', '--appendfsync', 'always', '--dir', newDir('deeplink-aof-')]);
    cleanups.push(() => redis.kill());
    const spoolDir = newDir('deeplink-upgrade-spool-');
    const env = await createTestEnvironment({
      REDIS_URL: redis.url,
      CLICK_SPOOL_DIR: spoolDir,
      CLICK_BATCH_SIZE: '4',
      LINK_CACHE_TTL_MS: '600000',
    });
    env.redis.on('error', () => {}); // this test's own connection sees the outage too
    cleanups.push(async () => {
      await redis.restart().catch(() => {}); // its clean-up deletes the test's keys
      await env.close();
    });
    const queue = clickQueue(redis.url, env.config.QUEUE_PREFIX);
    queue.on('error', () => {});
    cleanups.push(() => queue.close());
    const owner = await createUser(env.sql);
    const [failedLink, queuedLink, spooledLink, nextLink] = await Promise.all(
      Array.from({ length: 4 }, () => createLink(env.sql, owner, { defaultUrl: 'https://example.com/upgrade' })),
    );
    // What each link is sent, and so must count: the spooled link's first visit (which caches it in
    // the redirector for the outage) goes to the queue.
    const sent = { failed: 9, queued: 11, spooled: 1 + 10, next: 3 };

    // --- The current release ---
    const redirector = await startRedirector(env.env);
    cleanups.push(() => redirector.stop());
    const flushed = () => metric(redirector.metricsUrl, 'redirector_clicks_flushed_total');
    const urlOf = (code: string) => `${redirector.url}/${code}`;

    // Batches a worker of this release failed (its database away until its attempts ran out): the failed set.
    await redirects(urlOf(failedLink!.code), sent.failed);
    await expect.poll(flushed, { timeout: 15_000 }).toBe(sent.failed);
    const failing = new Worker(
      CLICK_QUEUE,
      async () => {
        throw new UnrecoverableError('database unreachable');
      },
      { connection: { url: redis.url, maxRetriesPerRequest: null }, prefix: env.config.QUEUE_PREFIX },
    );
    await waitForIdle(queue);
    await failing.close();
    const failedJobs = await queue.getFailed();
    expect(failedJobs.length).toBeGreaterThan(1);
    for (const job of failedJobs) expect(job.failedReason).not.toMatch(POISON_REASON);

    // Batches no worker took yet: the queue.
    await redirects(urlOf(queuedLink!.code), sent.queued);
    await redirects(urlOf(spooledLink!.code), 1);
    await expect.poll(flushed, { timeout: 15_000 }).toBe(sent.failed + sent.queued + 1);

    // Batches written while Redis was away, still in the spool when the redirector stopped.
    await redis.kill();
    await redirects(urlOf(spooledLink!.code), sent.spooled - 1);
    await expect.poll(() => metric(redirector.metricsUrl, 'redirector_clicks_spooled_total'), { timeout: 20_000 }).toBe(sent.spooled - 1);
    expect(await redirector.stop()).toBe(0);
    await redis.restart();
    const before = await queue.getJobCounts('waiting', 'failed');
    expect(before.failed).toBe(failedJobs.length);
    expect(before.waiting).toBeGreaterThan(1);
    for (const job of await queue.getJobs(['waiting', 'failed'])) expect(job.data.format).toBe('packed-2');

    // --- The next release: writes packed-3, reads packed-2 too ---
    // Its redirector starts by replaying the spool, with its own readers.
    const spool = createClickSpool({ dir: spoolDir, maxBytes: 10_000_000, formats: NEXT_RELEASE_FORMATS });
    expect(spool.bytes()).toBeGreaterThan(0);
    const metrics = new Metrics({
      bufferedClicks: () => 0,
      lruSize: () => 0,
      lruBytes: () => 0,
      domainCacheSize: () => 0,
      domainCacheBytes: () => 0,
      spoolBytes: () => spool.bytes(),
      spooling: () => false,
      native: true,
    });
    const connection = env.redis.duplicate({ maxRetriesPerRequest: null, enableOfflineQueue: false });
    cleanups.push(() => connection.disconnect());
    const replayer = createClickBuffer({
      config: { ...env.config, CLICK_FLUSH_MS: 50 },
      connection,
      spool,
      metrics,
      logger: capturingLogger().log,
    });
    await expect.poll(() => spool.bytes(), { timeout: 15_000 }).toBe(0);
    expect(await replayer.close(5_000)).toBe(0);
    expect(metrics.clicksReplayed).toBe(sent.spooled - 1);
    expect(metrics.spoolLinesSetAside).toBe(0);
    expect(existsSync(join(spoolDir, SET_ASIDE_FILE))).toBe(false);
    // …and writes the new format.
    const next = PACKED_3.write({
      batchId: 'next-release-batch',
      clicks: Array.from({ length: sent.next }, (_, i) => ({
        linkId: nextLink!.id,
        ts: Date.now() + i,
        ip: '203.0.113.9',
        userAgent: UA.windowsChrome,
        referrer: '',
      })),
    });
    await queue.add(CLICK_BATCH_JOB, next, { jobId: next.batchId });
    expect(readClickJob(next)).toBeUndefined(); // this release could not read it

    // Its worker counts them all, and its retry task sends the failed batches back.
    const worker = await createWorker({
      config: env.config,
      sql: env.sql,
      redis: env.redis,
      log: capturingLogger().log,
      schedule: false,
      formats: NEXT_RELEASE_FORMATS,
    });
    cleanups.push(() => worker.close());
    const retried = await retryFailedBatches(
      {
        queue: worker.queue,
        redis: env.redis,
        key: redisKeys(env.config.REDIS_PREFIX).failedBatchRetries,
        maxRetries: env.config.FAILED_BATCH_MAX_RETRIES,
        retentionSeconds: 3_600,
        log: capturingLogger().log,
        formats: NEXT_RELEASE_FORMATS,
      },
      Date.now() + 3_600_000, // past every back-off
    );
    expect(retried).toMatchObject({ retried: failedJobs.length, poison: 0, failedForGood: 0 });
    await waitForIdle(queue);
    expect(await queue.getJobCounts('waiting', 'failed', 'delayed')).toMatchObject({ waiting: 0, failed: 0, delayed: 0 });

    const counted = await Promise.all([failedLink, queuedLink, spooledLink, nextLink].map((link) => rolledUp(env.sql, link!.id)));
    expect(counted).toEqual([sent.failed, sent.queued, sent.spooled, sent.next].map((n) => ({ hourly: n, daily: n })));
  }, 120_000);
});
