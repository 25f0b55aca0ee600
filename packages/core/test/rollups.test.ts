import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { generateShortCode } from '../src/ids/short-code.js';
import { linksRepository } from '../src/db/links-repository.js';
import { rollupsRepository, type DimensionCount, type HourlyTotal } from '../src/db/rollups-repository.js';
import { usersRepository } from '../src/db/users-repository.js';
import { createTestEnvironment, type TestEnvironment } from '../../../test/support/environment.js';

const HOUR = 3_600_000;
const hour0 = Date.UTC(2026, 0, 15, 10);
const hour1 = hour0 + HOUR;

describe('rollupsRepository', () => {
  let env: TestEnvironment;
  let rollups: ReturnType<typeof rollupsRepository>;
  let userId: string;
  let linkA: string;
  let linkB: string;
  let batchNumber = 0;
  const nextBatchId = () => `batch-${++batchNumber}`;

  beforeAll(async () => {
    env = await createTestEnvironment();
    rollups = rollupsRepository(env.sql);
    const user = await usersRepository(env.sql).create({ name: 'R', email: 'rollups@example.com', passwordHash: 'x' });
    userId = user!.id;
  });
  afterAll(() => env.close());

  beforeEach(async () => {
    const links = linksRepository(env.sql);
    linkA = (await links.create(userId, generateShortCode(), { title: 'A', defaultUrl: 'https://a.example' })).id;
    linkB = (await links.create(userId, generateShortCode(), { title: 'B', defaultUrl: 'https://b.example' })).id;
  });

  const totals = (linkId: string) =>
    env.sql<{ bucket: Date; clicks: number; unique: number }[]>`
      SELECT bucket, clicks, hll_cardinality(visitors)::int AS unique
      FROM click_hourly WHERE link_id = ${linkId} ORDER BY bucket`;
  const dimensions = (linkId: string) =>
    env.sql<{ dimension: string; value: string; clicks: number }[]>`
      SELECT dimension, value, sum(clicks)::int AS clicks FROM click_hourly_dimensions
      WHERE link_id = ${linkId} GROUP BY dimension, value ORDER BY dimension, value`;
  const total = (linkId: string, bucket: number, clicks: number, visitors: string[]): HourlyTotal => ({
    linkId,
    bucket,
    clicks,
    visitors,
  });
  const platform = (linkId: string, bucket: number, value: string, clicks: number): DimensionCount => ({
    linkId,
    bucket,
    dimension: 'platform',
    value,
    clicks,
  });

  it('writes hourly totals, visitor sketches and dimension counts', async () => {
    const batchId = nextBatchId();
    const recorded = await rollups.recordBatch({
      batchId,
      receivedClicks: 6,
      totals: [total(linkA, hour0, 3, ['v1', 'v2']), total(linkA, hour1, 2, ['v1']), total(linkB, hour0, 1, ['v3'])],
      dimensions: [platform(linkA, hour0, 'ios', 2), platform(linkA, hour0, 'android', 1), platform(linkA, hour1, 'ios', 2)],
    });
    expect(recorded).toBe(true);
    expect(await totals(linkA)).toEqual([
      { bucket: new Date(hour0), clicks: 3, unique: 2 },
      { bucket: new Date(hour1), clicks: 2, unique: 1 },
    ]);
    expect(await totals(linkB)).toEqual([{ bucket: new Date(hour0), clicks: 1, unique: 1 }]);
    expect(await dimensions(linkA)).toEqual([
      { dimension: 'platform', value: 'android', clicks: 1 },
      { dimension: 'platform', value: 'ios', clicks: 4 },
    ]);
    const [row] = await env.sql`SELECT clicks FROM processed_batches WHERE batch_id = ${batchId}`;
    expect(row?.clicks).toBe(6);
  });

  it('adds later batches to existing rows and merges their sketches', async () => {
    await rollups.recordBatch({ batchId: nextBatchId(), receivedClicks: 2, totals: [total(linkA, hour0, 2, ['v1', 'v2'])], dimensions: [] });
    await rollups.recordBatch({ batchId: nextBatchId(), receivedClicks: 3, totals: [total(linkA, hour0, 3, ['v2', 'v3'])], dimensions: [] });
    const [merged] = await env.sql<{ unique: number }[]>`
      SELECT hll_cardinality(hll_union_agg(visitors))::int AS unique FROM click_hourly WHERE link_id = ${linkA}`;
    expect(await totals(linkA)).toEqual([{ bucket: new Date(hour0), clicks: 5, unique: 3 }]);
    expect(merged?.unique).toBe(3);
  });

  it('skips a batch whose id was recorded before', async () => {
    const batch = { batchId: nextBatchId(), receivedClicks: 1, totals: [total(linkA, hour0, 1, ['v1'])], dimensions: [platform(linkA, hour0, 'ios', 1)] };
    expect(await rollups.recordBatch(batch)).toBe(true);
    expect(await rollups.recordBatch(batch)).toBe(false);
    expect(await totals(linkA)).toEqual([{ bucket: new Date(hour0), clicks: 1, unique: 1 }]);
    expect(await dimensions(linkA)).toEqual([{ dimension: 'platform', value: 'ios', clicks: 1 }]);
  });

  it('writes several batches in one call, sharing rows, each once, and leaves the batches unchanged', async () => {
    const recorded = { batchId: nextBatchId(), receivedClicks: 100, totals: [total(linkA, hour0, 100, ['old'])], dimensions: [platform(linkA, hour0, 'ios', 100)] };
    await rollups.recordBatch(recorded);
    const first = {
      batchId: nextBatchId(),
      receivedClicks: 3,
      totals: [total(linkA, hour0, 2, ['v1', 'v2']), total(linkB, hour1, 1, ['v9'])],
      dimensions: [platform(linkA, hour0, 'ios', 2), platform(linkB, hour1, 'ios', 1)],
    };
    const second = {
      batchId: nextBatchId(),
      receivedClicks: 3,
      totals: [total(linkA, hour0, 3, ['v2', 'v3'])],
      dimensions: [platform(linkA, hour0, 'ios', 1), platform(linkA, hour0, 'android', 2)],
    };
    const snapshot = JSON.stringify(first);

    // The same batch twice in one call, and a batch recorded earlier, add nothing extra.
    const ids = await rollups.recordBatches([first, second, first, recorded]);

    expect([...ids].sort()).toEqual([first.batchId, second.batchId].sort());
    expect(await totals(linkA)).toEqual([{ bucket: new Date(hour0), clicks: 105, unique: 4 }]);
    expect(await totals(linkB)).toEqual([{ bucket: new Date(hour1), clicks: 1, unique: 1 }]);
    expect(await dimensions(linkA)).toEqual([
      { dimension: 'platform', value: 'android', clicks: 2 },
      { dimension: 'platform', value: 'ios', clicks: 103 },
    ]);
    expect(JSON.stringify(first)).toBe(snapshot);
  });

  it('skips rows of deleted links and still records the rest of the batch', async () => {
    await linksRepository(env.sql).delete(linkB);
    const batchId = nextBatchId();
    const recorded = await rollups.recordBatch({
      batchId,
      receivedClicks: 3,
      totals: [total(linkA, hour0, 1, ['v1']), total(linkB, hour0, 2, ['v2'])],
      dimensions: [platform(linkA, hour0, 'ios', 1), platform(linkB, hour0, 'desktop', 2)],
    });
    expect(recorded).toBe(true);
    expect(await totals(linkA)).toHaveLength(1);
    const [orphans] = await env.sql<{ n: number }[]>`
      SELECT (SELECT count(*) FROM click_hourly WHERE link_id = ${linkB})::int
           + (SELECT count(*) FROM click_hourly_dimensions WHERE link_id = ${linkB})::int AS n`;
    expect(orphans?.n).toBe(0);
  });

  it('records the id of an empty batch so its redelivery is skipped too', async () => {
    const batch = { batchId: nextBatchId(), receivedClicks: 4, totals: [], dimensions: [] };
    expect(await rollups.recordBatch(batch)).toBe(true);
    expect(await rollups.recordBatch(batch)).toBe(false);
  });

  it('keeps exact totals when many transactions touch the same rows concurrently', async () => {
    const batches = Array.from({ length: 40 }, (_, i) => {
      // Alternate the order of rows so a naive writer would take row locks in opposite orders.
      const rows = [total(linkA, hour0, 1, [`v${i}`]), total(linkA, hour1, 2, [`v${i}`]), total(linkB, hour0, 3, [`w${i % 5}`])];
      const dims = [platform(linkA, hour0, 'ios', 1), platform(linkA, hour1, 'ios', 2), platform(linkB, hour0, 'android', 3)];
      return { batchId: nextBatchId(), receivedClicks: 6, totals: i % 2 ? rows.reverse() : rows, dimensions: i % 2 ? dims.reverse() : dims };
    });
    const results = await Promise.all(batches.map((batch) => rollups.recordBatch(batch)));
    expect(results.every(Boolean)).toBe(true);
    expect(await totals(linkA)).toEqual([
      { bucket: new Date(hour0), clicks: 40, unique: 40 },
      { bucket: new Date(hour1), clicks: 80, unique: 40 },
    ]);
    expect(await totals(linkB)).toEqual([{ bucket: new Date(hour0), clicks: 120, unique: 5 }]);
    expect(await dimensions(linkB)).toEqual([{ dimension: 'platform', value: 'android', clicks: 120 }]);
  });

  it('prunes only batch ids older than the cut-off', async () => {
    const old = nextBatchId();
    const recent = nextBatchId();
    await rollups.recordBatch({ batchId: old, receivedClicks: 0, totals: [], dimensions: [] });
    await rollups.recordBatch({ batchId: recent, receivedClicks: 0, totals: [], dimensions: [] });
    await env.sql`UPDATE processed_batches SET processed_at = now() - interval '10 days' WHERE batch_id = ${old}`;
    const removed = await rollups.pruneProcessedBatches(new Date(Date.now() - 7 * 24 * HOUR));
    expect(removed).toBe(1);
    const ids = (await env.sql<{ batch_id: string }[]>`SELECT batch_id FROM processed_batches`).map((r) => r.batch_id);
    expect(ids).toContain(recent);
    expect(ids).not.toContain(old);
  });
});
