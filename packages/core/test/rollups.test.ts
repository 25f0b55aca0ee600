import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { generateShortCode } from '../src/ids/short-code.js';
import { linksRepository } from '../src/db/links-repository.js';
import {
  emptyHourlyRollup,
  rollupsRepository,
  type ClickDimension,
  type HourlyRollup,
  type RollupBatch,
} from '../src/db/rollups-repository.js';
import { usersRepository } from '../src/db/users-repository.js';
import { createTestEnvironment, type TestEnvironment } from '../../../test/support/environment.js';

const HOUR = 3_600_000;
const hour0 = Date.UTC(2026, 0, 15, 10);
const hour1 = hour0 + HOUR;

/** An hour of `clicks` clicks from `visitors`, with the given dimension counts. */
function hour(
  linkId: string,
  bucket: number,
  clicks: number,
  visitors: string[],
  counts: Partial<Record<ClickDimension, Record<string, number>>> = {},
): HourlyRollup {
  const rollup = emptyHourlyRollup(linkId, bucket);
  rollup.clicks = clicks;
  rollup.visitors = visitors;
  for (const [dimension, values] of Object.entries(counts) as [ClickDimension, Record<string, number>][]) {
    for (const [value, count] of Object.entries(values)) rollup.counts[dimension].set(value, count);
  }
  return rollup;
}

describe('rollupsRepository', () => {
  let env: TestEnvironment;
  let rollups: ReturnType<typeof rollupsRepository>;
  let userId: string;
  let linkA: string;
  let linkB: string;
  let batchNumber = 0;
  const batch = (hours: HourlyRollup[], receivedClicks = 1): RollupBatch => ({ batchId: `batch-${++batchNumber}`, receivedClicks, hours });

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

  it('writes hourly totals, visitor sketches and dimension counts', async () => {
    const first = batch(
      [
        hour(linkA, hour0, 3, ['v1', 'v2'], { platform: { ios: 2, android: 1 }, country: { US: 3 } }),
        hour(linkA, hour1, 2, ['v1'], { platform: { ios: 2 } }),
        hour(linkB, hour0, 1, ['v3']),
      ],
      6,
    );
    expect(await rollups.recordBatch(first)).toBe(true);
    expect(await totals(linkA)).toEqual([
      { bucket: new Date(hour0), clicks: 3, unique: 2 },
      { bucket: new Date(hour1), clicks: 2, unique: 1 },
    ]);
    expect(await totals(linkB)).toEqual([{ bucket: new Date(hour0), clicks: 1, unique: 1 }]);
    expect(await dimensions(linkA)).toEqual([
      { dimension: 'country', value: 'US', clicks: 3 },
      { dimension: 'platform', value: 'android', clicks: 1 },
      { dimension: 'platform', value: 'ios', clicks: 4 },
    ]);
    const [row] = await env.sql`SELECT clicks FROM processed_batches WHERE batch_id = ${first.batchId}`;
    expect(row?.clicks).toBe(6);
  });

  it('adds later batches to existing rows and merges their sketches', async () => {
    await rollups.recordBatch(batch([hour(linkA, hour0, 2, ['v1', 'v2'], { device: { Mobile: 2 } })]));
    await rollups.recordBatch(batch([hour(linkA, hour0, 3, ['v2', 'v3'], { device: { Mobile: 1, Desktop: 2 } })]));
    expect(await totals(linkA)).toEqual([{ bucket: new Date(hour0), clicks: 5, unique: 3 }]);
    expect(await dimensions(linkA)).toEqual([
      { dimension: 'device', value: 'Desktop', clicks: 2 },
      { dimension: 'device', value: 'Mobile', clicks: 3 },
    ]);
  });

  it('skips a batch whose id was recorded before', async () => {
    const once = batch([hour(linkA, hour0, 1, ['v1'], { platform: { ios: 1 } })]);
    expect(await rollups.recordBatch(once)).toBe(true);
    expect(await rollups.recordBatch(once)).toBe(false);
    expect(await totals(linkA)).toEqual([{ bucket: new Date(hour0), clicks: 1, unique: 1 }]);
    expect(await dimensions(linkA)).toEqual([{ dimension: 'platform', value: 'ios', clicks: 1 }]);
  });

  it('writes several batches in one call, sharing rows, each once, and leaves the batches unchanged', async () => {
    const recorded = batch([hour(linkA, hour0, 100, ['old'], { platform: { ios: 100 } })]);
    await rollups.recordBatch(recorded);
    const first = batch([hour(linkA, hour0, 2, ['v1', 'v2'], { platform: { ios: 2 } }), hour(linkB, hour1, 1, ['v9'])]);
    const second = batch([hour(linkA, hour0, 3, ['v2', 'v3'], { platform: { ios: 1, android: 2 } })]);
    const snapshot = JSON.stringify(first.hours.map((h) => ({ ...h, counts: [...h.counts.platform] })));

    // The same batch twice in one call, and a batch recorded earlier, count nothing extra.
    const ids = await rollups.recordBatches([first, second, first, recorded]);

    expect([...ids].sort()).toEqual([first.batchId, second.batchId].sort());
    expect(await totals(linkA)).toEqual([{ bucket: new Date(hour0), clicks: 105, unique: 4 }]);
    expect(await totals(linkB)).toEqual([{ bucket: new Date(hour1), clicks: 1, unique: 1 }]);
    expect(await dimensions(linkA)).toEqual([
      { dimension: 'platform', value: 'android', clicks: 2 },
      { dimension: 'platform', value: 'ios', clicks: 103 },
    ]);
    expect(JSON.stringify(first.hours.map((h) => ({ ...h, counts: [...h.counts.platform] })))).toBe(snapshot);
  });

  it('skips rows of deleted links and still records the rest of the batch', async () => {
    await linksRepository(env.sql).delete(linkB);
    const mixed = batch([hour(linkA, hour0, 1, ['v1'], { platform: { ios: 1 } }), hour(linkB, hour0, 2, ['v2'], { platform: { desktop: 2 } })], 3);
    expect(await rollups.recordBatch(mixed)).toBe(true);
    expect(await totals(linkA)).toHaveLength(1);
    const [orphans] = await env.sql<{ n: number }[]>`
      SELECT (SELECT count(*) FROM click_hourly WHERE link_id = ${linkB})::int
           + (SELECT count(*) FROM click_hourly_dimensions WHERE link_id = ${linkB})::int AS n`;
    expect(orphans?.n).toBe(0);
  });

  it('records the id of an empty batch so its redelivery is skipped too', async () => {
    const empty = batch([], 4);
    expect(await rollups.recordBatch(empty)).toBe(true);
    expect(await rollups.recordBatch(empty)).toBe(false);
  });

  it('keeps exact totals when many transactions touch the same rows concurrently', async () => {
    const batches = Array.from({ length: 40 }, (_, i) => {
      // Alternate the order of rows so a naive writer would take row locks in opposite orders.
      const hours = [
        hour(linkA, hour0, 1, [`v${i}`], { platform: { ios: 1 } }),
        hour(linkA, hour1, 2, [`v${i}`], { platform: { ios: 2 } }),
        hour(linkB, hour0, 3, [`w${i % 5}`], { platform: { android: 3 } }),
      ];
      return batch(i % 2 ? hours.reverse() : hours, 6);
    });
    const results = await Promise.all(batches.map((b) => rollups.recordBatch(b)));
    expect(results.every(Boolean)).toBe(true);
    expect(await totals(linkA)).toEqual([
      { bucket: new Date(hour0), clicks: 40, unique: 40 },
      { bucket: new Date(hour1), clicks: 80, unique: 40 },
    ]);
    expect(await totals(linkB)).toEqual([{ bucket: new Date(hour0), clicks: 120, unique: 5 }]);
    expect(await dimensions(linkB)).toEqual([{ dimension: 'platform', value: 'android', clicks: 120 }]);
  });

  it('prunes only batch ids older than the cut-off', async () => {
    const old = batch([]);
    const recent = batch([]);
    await rollups.recordBatches([old, recent]);
    await env.sql`UPDATE processed_batches SET processed_at = now() - interval '10 days' WHERE batch_id = ${old.batchId}`;
    const removed = await rollups.pruneProcessedBatches(new Date(Date.now() - 7 * 24 * HOUR));
    expect(removed).toBe(1);
    const ids = (await env.sql<{ batch_id: string }[]>`SELECT batch_id FROM processed_batches`).map((r) => r.batch_id);
    expect(ids).toContain(recent.batchId);
    expect(ids).not.toContain(old.batchId);
  });
});
