import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLICK_QUEUE, type ClickJobData, readClickJob } from '@deeplink/core';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { capturingLogger } from '@deeplink/test-kit/logs';
import { createClickBuffer } from '../src/click-buffer.js';
import { createClickSpool } from '../src/click-spool.js';
import { Metrics } from '../src/metrics.js';

// On a Redis Cluster a batch counts as safely queued once a replica confirms it (WAIT). Here the
// confirmation is made to fail, as with a replica that lags, and the job is then removed, as a
// failover of a primary that had not passed it on would: the buffer must write it again.
describe('click batches no replica confirmed', () => {
  let env: TestEnvironment;
  let queue: Queue<ClickJobData>;
  let spoolDir: string;

  beforeAll(async () => {
    env = await createTestEnvironment();
    queue = new Queue<ClickJobData>(CLICK_QUEUE, {
      connection: env.redis.duplicate({ maxRetriesPerRequest: null }),
      prefix: env.config.QUEUE_PREFIX,
    });
    spoolDir = mkdtempSync(join(tmpdir(), 'deeplink-unconfirmed-'));
  });
  afterAll(async () => {
    await queue?.close();
    await env?.close();
    rmSync(spoolDir, { recursive: true, force: true });
  });

  it('are written once more after the delay, without asking a replica again, and spooled at shutdown', async () => {
    const connection = env.redis.duplicate({ maxRetriesPerRequest: null, enableOfflineQueue: false });
    const spool = createClickSpool({ dir: spoolDir, maxBytes: 1_000_000 });
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
    let confirmations = 0;
    const buffer = createClickBuffer({
      config: { ...env.config, CLICK_FLUSH_MS: 20 },
      connection,
      spool,
      metrics,
      logger: capturingLogger().log,
      replicated: async () => {
        confirmations++;
        return false;
      },
      rewriteUnconfirmedAfterMs: 300,
    });
    try {
      for (let i = 0; i < 3; i++) buffer.push({ linkId: 'link-1', ts: Date.now(), ip: `203.0.113.${i}`, userAgent: 'agent', referrer: '' });
      await buffer.flush();
      const [written] = await queue.getWaiting();
      expect(readClickJob(written?.data)?.clicks).toHaveLength(3);
      expect(metrics.unreplicatedBatches).toBe(1);

      // The primary that held it fails before a replica has it: the job is gone.
      await written!.remove();
      await expect.poll(async () => (await queue.getWaiting()).map((job) => job.id), { timeout: 5_000 }).toEqual([written!.id]);
      expect(metrics.batchesRewritten).toBe(1);
      expect(confirmations).toBe(1);

      // Another unconfirmed batch, still waiting for its second write when the buffer closes: it goes to the spool.
      buffer.push({ linkId: 'link-1', ts: Date.now(), ip: '203.0.113.9', userAgent: 'agent', referrer: '' });
      await buffer.flush();
      expect(metrics.unreplicatedBatches).toBe(2);
    } finally {
      await buffer.close(5_000);
      connection.disconnect();
    }
    const spooled: string[] = [];
    await createClickSpool({ dir: spoolDir, maxBytes: 1_000_000 }).replay(async (batch) => void spooled.push(batch.batchId));
    // The second batch: written (its job waits in the queue) and spooled to be written again at the next start.
    expect(spooled).toHaveLength(1);
    expect((await queue.getWaiting()).map((job) => job.id)).toContain(spooled[0]);
  });
});

// Redis going away mid-write leaves that write hanging until its timeout while visits keep coming.
// Memory fills up meanwhile: the spool takes the sealed batches rather than the clicks being dropped.
describe('a full buffer while a write hangs', () => {
  let env: TestEnvironment;
  let queue: Queue<ClickJobData>;
  let spoolDir: string;

  beforeAll(async () => {
    env = await createTestEnvironment();
    queue = new Queue<ClickJobData>(CLICK_QUEUE, {
      connection: env.redis.duplicate({ maxRetriesPerRequest: null }),
      prefix: env.config.QUEUE_PREFIX,
    });
    spoolDir = mkdtempSync(join(tmpdir(), 'deeplink-full-buffer-'));
  });
  afterAll(async () => {
    await queue?.close();
    await env?.close();
    rmSync(spoolDir, { recursive: true, force: true });
  });

  it('spills sealed batches to the spool, keeps the one being written, and the spool reaches the queue afterwards', async () => {
    const connection = env.redis.duplicate({ maxRetriesPerRequest: null, enableOfflineQueue: false });
    const spool = createClickSpool({ dir: spoolDir, maxBytes: 1_000_000 });
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
    // The first write's confirmation takes a second: that write is in flight all the while.
    let release!: () => void;
    const slow = new Promise<boolean>((resolve) => (release = () => resolve(true)));
    let writes = 0;
    const buffer = createClickBuffer({
      config: { ...env.config, CLICK_FLUSH_MS: 20, CLICK_BATCH_SIZE: 10, CLICK_BUFFER_MAX: 100 },
      connection,
      spool,
      metrics,
      logger: capturingLogger().log,
      replicated: () => (writes++ === 0 ? slow : Promise.resolve(true)),
    });
    const click = (i: number) => ({ linkId: 'link-1', ts: Date.now(), ip: `198.51.100.${i % 250}`, userAgent: 'agent', referrer: '' });
    try {
      buffer.push(click(0));
      const first = buffer.flush();
      for (let i = 1; i <= 500; i++) buffer.push(click(i));
      expect(metrics.clicksDropped).toBe(0);
      expect(buffer.size()).toBeLessThanOrEqual(100);
      expect(spool.bytes()).toBeGreaterThan(0);
      release();
      await first;
      // The ticks send what memory holds and replay the spool: every click reaches the queue once.
      await expect
        .poll(
          async () => {
            const jobs = await queue.getWaiting(0, -1);
            return jobs.reduce((sum, job) => sum + (readClickJob(job.data)?.clicks.length ?? 0), 0);
          },
          { timeout: 10_000 },
        )
        .toBe(501);
      expect(spool.bytes()).toBe(0);
      expect(metrics.clicksDropped).toBe(0);
    } finally {
      await buffer.close(5_000);
      connection.disconnect();
    }
  });
});
