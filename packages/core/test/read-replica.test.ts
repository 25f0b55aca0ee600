import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyticsRepository, type AnalyticsRepository } from '../src/db/analytics-repository.js';
import { createDatabase, type Sql } from '../src/db/client.js';
import { analyticsWithReplica, isReplicaUnavailable } from '../src/db/read-replica.js';
import { withTimeout } from '../src/runtime/timeout.js';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { freePort } from '@deeplink/test-kit/processes';

// The fallback rules against a replica address nothing listens on (a real refused connection);
// test/replica/ runs the same code against a real streaming replica.

/** A repository that counts the reads it was asked for. */
function counted(repository: AnalyticsRepository) {
  const calls = { n: 0 };
  const tally =
    <A extends unknown[], R>(call: (...args: A) => R) =>
    (...args: A): R => {
      calls.n++;
      return call(...args);
    };
  const wrapped: AnalyticsRepository = {
    linkReport: tally(repository.linkReport),
    accountSummary: tally(repository.accountSummary),
    exportRows: tally(repository.exportRows),
    wideRows: tally(repository.wideRows),
    dimensionTotals: tally(repository.dimensionTotals),
  };
  return { wrapped, calls };
}

describe('analyticsWithReplica', () => {
  let env: TestEnvironment;
  let unreachable: Sql;
  const userId = '00000000-0000-4000-8000-000000000001';
  const range = { start: new Date('2026-01-01T00:00:00Z'), end: new Date('2026-01-02T00:00:00Z'), timeBucket: 'day' as const };

  beforeAll(async () => {
    env = await createTestEnvironment();
    unreachable = createDatabase(`postgres://postgres@127.0.0.1:${await freePort()}/deeplink`, { max: 1, connectTimeoutSeconds: 2 });
  });
  afterAll(async () => {
    await unreachable.end();
    await env.close();
  });

  it('answers from the primary while the replica is unreachable, and asks the replica again once a probe answers', async () => {
    const fallbacks: unknown[] = [];
    let recoveries = 0;
    let probeAnswers = false;
    const replica = counted(analyticsRepository(unreachable));
    const reads = analyticsWithReplica(analyticsRepository(env.sql), replica.wrapped, {
      retryAfterMs: 200,
      probe: () => (probeAnswers ? env.sql`SELECT 1` : unreachable`SELECT 1`),
      onFallback: (e) => fallbacks.push(e),
      onRecovered: () => recoveries++,
    });
    try {
      expect(await reads.accountSummary(userId)).toEqual({
        totalLinks: 0,
        activeLinks: 0,
        totalClicks: 0,
        topLinks: [],
        dimensions: [],
        appEvents: [],
      });
      expect(replica.calls.n).toBe(1);
      expect(fallbacks).toHaveLength(1);
      expect(isReplicaUnavailable(fallbacks[0])).toBe(true);

      // While the probes fail, the replica is not asked for reads.
      expect((await reads.linkReport(userId, range, ['country'])).totalClicks).toBe(0);
      await sleep(700);
      const exported = [];
      for await (const rows of reads.exportRows(userId, range)) exported.push(...rows);
      expect(exported).toEqual([{ bucket: new Date('2026-01-01T00:00:00Z'), dimension: 'total', value: 'all', clicks: 0 }]);
      expect(replica.calls.n).toBe(1);
      expect(recoveries).toBe(0);

      // Once a probe answers, reads go to the replica again (found down again, once more logged).
      probeAnswers = true;
      await expect.poll(() => recoveries, { timeout: 5_000 }).toBe(1);
      const wide = [];
      for await (const rows of reads.wideRows(userId, range)) wide.push(...rows);
      expect(wide).toEqual([
        {
          bucket: new Date('2026-01-01T00:00:00Z'),
          clicks: 0,
          uniqueClicks: 0,
          dimensions: [],
          values: [],
          counts: [],
          events: [],
          eventPlatforms: [],
          eventCounts: [],
        },
      ]);
      expect(await reads.dimensionTotals([userId], range, ['country'])).toEqual([]);
      expect(replica.calls.n).toBe(2);
      expect(fallbacks).toHaveLength(2);
    } finally {
      reads.close();
    }
  });

  it('answers from the primary when the replica does not answer within readTimeoutMs, and stops asking it', async () => {
    // The "replica" is a database of its own whose tables are locked: it takes queries and does not answer.
    const hung = await createTestEnvironment();
    let unlock!: () => void;
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const holder = hung.sql.begin(async (tx) => {
      await tx`LOCK TABLE links, click_daily, click_hourly IN ACCESS EXCLUSIVE MODE`;
      locked();
      await new Promise<void>((resolve) => (unlock = resolve));
    });
    await lockTaken;
    const replicaSql = createDatabase(hung.config.DATABASE_URL, { max: 3 });
    const replica = counted(analyticsRepository(replicaSql));
    let recoveries = 0;
    const reads = analyticsWithReplica(analyticsRepository(env.sql), replica.wrapped, {
      readTimeoutMs: 300,
      retryAfterMs: 200,
      probe: () => replicaSql`SELECT count(*) FROM links`,
      onRecovered: () => recoveries++,
    });
    try {
      const timed = async <T>(work: () => Promise<T>) => {
        const started = performance.now();
        return { result: await work(), ms: performance.now() - started };
      };
      const exportAll = async () => {
        const rows = [];
        for await (const batch of reads.exportRows(userId, range)) rows.push(...batch);
        return rows;
      };
      // Reads in flight when the replica hangs: each answered by the primary after the deadline.
      // Bounded, so that a read stuck on the lock fails the test instead of outliving it.
      const [summary, exported] = await withTimeout(
        Promise.all([timed(() => reads.accountSummary(userId)), timed(exportAll)]),
        10_000,
        'reads',
      );
      expect(summary.result.totalLinks).toBe(0);
      expect(exported.result).toHaveLength(1);
      for (const { ms } of [summary, exported]) expect(ms).toBeGreaterThanOrEqual(290);
      for (const { ms } of [summary, exported]) expect(ms).toBeLessThan(3_000);
      expect(replica.calls.n).toBe(2);

      // Later reads go to the primary without waiting while the probe gets no answer.
      await sleep(500);
      const later = await timed(() => reads.linkReport(userId, range, ['country']));
      expect(later.result.totalClicks).toBe(0);
      expect(later.ms).toBeLessThan(290);
      expect(replica.calls.n).toBe(2);
      expect(recoveries).toBe(0);

      // Once it answers (the probe's query with it), the replica is asked again.
      unlock();
      await holder;
      await expect.poll(() => recoveries, { timeout: 5_000 }).toBe(1);
      await reads.accountSummary(userId);
      expect(replica.calls.n).toBe(3);
    } finally {
      unlock();
      await holder;
      reads.close();
      await replicaSql.end();
      await hung.close();
    }
  });

  it('passes errors of the query itself on instead of asking the primary', async () => {
    const primary = counted(analyticsRepository(env.sql));
    const reads = analyticsWithReplica(primary.wrapped, analyticsRepository(env.sql));
    const error = await reads.accountSummary('not-a-uuid').catch((e: unknown) => e);
    expect((error as { code?: string }).code).toBe('22P02');
    expect(isReplicaUnavailable(error)).toBe(false);
    expect(primary.calls.n).toBe(0);
  });
});
