import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyticsRepository, type AnalyticsRepository } from '../src/db/analytics-repository.js';
import { createDatabase, type Sql } from '../src/db/client.js';
import { analyticsWithReplica, isReplicaUnavailable } from '../src/db/read-replica.js';
import { createTestEnvironment, type TestEnvironment } from '../../../test/support/environment.js';
import { freePort } from '../../../test/support/processes.js';

// The fallback rules against a replica address nothing listens on (a real refused connection);
// test/replica/ runs the same code against a real streaming replica.

/** A repository that counts the reads it was asked for. */
function counted(repository: AnalyticsRepository) {
  const calls = { n: 0 };
  const wrapped: AnalyticsRepository = {
    linkReport: (...args) => (calls.n++, repository.linkReport(...args)),
    accountSummary: (...args) => (calls.n++, repository.accountSummary(...args)),
    exportRows: (...args) => (calls.n++, repository.exportRows(...args)),
    wideRows: (...args) => (calls.n++, repository.wideRows(...args)),
    dimensionTotals: (...args) => (calls.n++, repository.dimensionTotals(...args)),
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

  it('answers from the primary while the replica is unreachable, and tries the replica again after the pause', async () => {
    let now = 1_000_000;
    const fallbacks: unknown[] = [];
    const replica = counted(analyticsRepository(unreachable));
    const reads = analyticsWithReplica(analyticsRepository(env.sql), replica.wrapped, { retryAfterMs: 5000, now: () => now, onFallback: (e) => fallbacks.push(e) });

    expect(await reads.accountSummary(userId)).toEqual({ totalLinks: 0, activeLinks: 0, totalClicks: 0, topLinks: [] });
    expect(replica.calls.n).toBe(1);
    expect(fallbacks).toHaveLength(1);
    expect(isReplicaUnavailable(fallbacks[0])).toBe(true);

    // Within the pause the replica is not asked.
    now += 4999;
    expect((await reads.linkReport(userId, range, ['country'])).totalClicks).toBe(0);
    const exported = [];
    for await (const rows of reads.exportRows(userId, range)) exported.push(...rows);
    expect(exported).toEqual([{ bucket: new Date('2026-01-01T00:00:00Z'), dimension: 'total', value: 'all', clicks: 0 }]);
    expect(replica.calls.n).toBe(1);

    // After it, the replica is tried again (and found down again, once more logged).
    now += 2;
    for await (const rows of reads.exportRows(userId, range)) expect(rows).toHaveLength(1);
    expect(replica.calls.n).toBe(2);
    expect(fallbacks).toHaveLength(2);

    // The wide export's reads fall back the same way.
    now += 5001;
    const wide = [];
    for await (const rows of reads.wideRows(userId, range)) wide.push(...rows);
    expect(wide).toEqual([{ bucket: new Date('2026-01-01T00:00:00Z'), clicks: 0, uniqueClicks: 0, dimensions: [], values: [], counts: [] }]);
    expect(await reads.dimensionTotals([userId], range, ['country'])).toEqual([]);
    expect(replica.calls.n).toBe(3);
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
