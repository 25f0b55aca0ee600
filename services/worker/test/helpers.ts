import { randomUUID } from 'node:crypto';
import { Queue, type JobsOptions } from 'bullmq';
import {
  CLICK_BATCH_JOB,
  CLICK_QUEUE,
  generateShortCode,
  linksRepository,
  packClickBatch,
  usersRepository,
  type ClickBatch,
  type ClickEvent,
  type ClickJobData,
  type Sql,
} from '@deeplink/core';
import type { TestEnvironment } from '../../../test/support/environment.js';
import { capturingLogger } from '../../../test/support/logs.js';
import { UA } from '../../../test/support/user-agents.js';

/** Shared with the other suites' tests. */
export { UA };

export const HOUR = 3_600_000;

/** A user with `count` fresh links; returns the link ids. */
export async function createLinks(sql: Sql, count: number): Promise<string[]> {
  const user = await usersRepository(sql).create({ name: 'Worker test', email: `${randomUUID()}@example.com`, passwordHash: 'x' });
  const links = linksRepository(sql);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    ids.push((await links.create(user!.id, generateShortCode(), { title: `Link ${i}`, defaultUrl: 'https://example.com' })).id);
  }
  return ids;
}

export const click = (linkId: string, overrides: Partial<ClickEvent> = {}): ClickEvent => ({
  linkId,
  ts: Date.UTC(2026, 2, 1, 12, 30),
  ip: '8.8.8.8',
  userAgent: UA.windowsChrome,
  referrer: '',
  ...overrides,
});

/** A producer for the test's click queue: packs batches as the redirector does (addPlain: as is). */
export function clickQueue(env: TestEnvironment) {
  const connection = env.redis.duplicate({ maxRetriesPerRequest: null });
  const queue = new Queue<ClickJobData>(CLICK_QUEUE, { connection, prefix: env.config.QUEUE_PREFIX });
  const addPlain = (batch: ClickJobData, options: JobsOptions = {}) =>
    queue.add(CLICK_BATCH_JOB, batch, { jobId: batch.batchId, attempts: 3, backoff: { type: 'fixed', delay: 20 }, ...options });
  return {
    queue,
    add: (batch: ClickBatch, options: JobsOptions = {}) => addPlain(packClickBatch(batch), options),
    addPlain,
    async close() {
      await queue.close();
      await connection.quit();
    },
  };
}

/** Resolves once no job is waiting, running or waiting for a retry. */
export async function waitForIdle(queue: Queue, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
    if (Object.values(counts).every((n) => n === 0)) return;
    if (Date.now() > deadline) throw new Error(`queue not idle: ${JSON.stringify(counts)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Polls `check` until it returns true. */
export async function waitUntil(check: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export { capturingLogger };

export async function totalClicks(sql: Sql, linkId: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`SELECT coalesce(sum(clicks), 0)::int AS n FROM click_hourly WHERE link_id = ${linkId}`;
  return row!.n;
}

export async function uniqueVisitors(sql: Sql, linkId: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    SELECT coalesce(hll_cardinality(hll_union_agg(visitors)), 0)::int AS n FROM click_hourly WHERE link_id = ${linkId}`;
  return row!.n;
}

/** Clicks per value of one dimension, over all hours. */
export async function dimension(sql: Sql, linkId: string, name: string): Promise<Record<string, number>> {
  const rows = await sql<{ value: string; n: number }[]>`
    SELECT value, sum(clicks)::int AS n FROM click_hourly_dimensions
    WHERE link_id = ${linkId} AND dimension = ${name} GROUP BY value`;
  return Object.fromEntries(rows.map((r) => [r.value, r.n]));
}
