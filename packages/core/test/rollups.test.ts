import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { generateShortCode } from '../src/ids/short-code.js';
import { linksRepository } from '../src/db/links-repository.js';
import {
  BatchesRecordedBefore,
  type RollupAppEvent,
  RollupRows,
  rollupsRepository,
  type RollupBatch,
  type RollupClick,
} from '../src/db/rollups-repository.js';
import { usersRepository } from '../src/db/users-repository.js';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';

const HOUR = 3_600_000;
const hour0 = Date.UTC(2026, 0, 15, 10);
const hour1 = hour0 + HOUR;
const nextDay = Date.UTC(2026, 0, 16, 0);

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
  const daily = (linkId: string) =>
    env.sql<{ day: string; clicks: number; unique: number }[]>`
      SELECT day::text, clicks, hll_cardinality(visitors)::int AS unique
      FROM click_daily WHERE link_id = ${linkId} ORDER BY day`;
  const dimensions = (linkId: string, table: 'click_hourly_dimensions' | 'click_daily_dimensions' = 'click_hourly_dimensions') =>
    env.sql<{ dimension: string; value: string; clicks: number }[]>`
      SELECT dimension, value, sum(clicks)::int AS clicks FROM ${env.sql(table)}
      WHERE link_id = ${linkId} AND dimension IN ('platform', 'browser') GROUP BY dimension, value ORDER BY dimension, value`;
  const rowCount = async (linkId: string) => {
    const [row] = await env.sql<{ n: number }[]>`
      SELECT (SELECT count(*) FROM click_hourly WHERE link_id = ${linkId})::int
           + (SELECT count(*) FROM click_hourly_dimensions WHERE link_id = ${linkId})::int
           + (SELECT count(*) FROM click_daily WHERE link_id = ${linkId})::int
           + (SELECT count(*) FROM click_daily_dimensions WHERE link_id = ${linkId})::int AS n`;
    return row!.n;
  };

  /** `n` clicks on a link in one hour, by the given visitors in turn. */
  const clicks = (linkId: string, bucket: number, n: number, visitors: string[], platform = 'ios', browser = 'Chrome'): RollupClick[] =>
    Array.from({ length: n }, (_, i) => ({
      linkId,
      bucket,
      visitor: visitors[i % visitors.length]!,
      dimensions: { platform, country: 'US', browser, os: 'iOS', device: 'Mobile', referrer: 'direct' },
    }));
  const batch = (...groups: RollupClick[][]): RollupBatch => {
    const all = groups.flat();
    return { batchId: nextBatchId(), receivedClicks: all.length, clicks: all };
  };

  it('writes hourly and daily totals, visitor sketches and dimension counts', async () => {
    const first = batch(
      clicks(linkA, hour0, 2, ['v1', 'v2'], 'ios'),
      clicks(linkA, hour0, 1, ['v1'], 'android'),
      clicks(linkA, hour1, 2, ['v1'], 'ios'),
      clicks(linkB, hour0, 1, ['v3']),
    );
    expect(await rollups.recordBatch(first)).toBe(true);
    expect(await totals(linkA)).toEqual([
      { bucket: new Date(hour0), clicks: 3, unique: 2 },
      { bucket: new Date(hour1), clicks: 2, unique: 1 },
    ]);
    expect(await totals(linkB)).toEqual([{ bucket: new Date(hour0), clicks: 1, unique: 1 }]);
    expect(await daily(linkA)).toEqual([{ day: '2026-01-15', clicks: 5, unique: 2 }]);
    const expected = [
      { dimension: 'browser', value: 'Chrome', clicks: 5 },
      { dimension: 'platform', value: 'android', clicks: 1 },
      { dimension: 'platform', value: 'ios', clicks: 4 },
    ];
    expect(await dimensions(linkA)).toEqual(expected);
    expect(await dimensions(linkA, 'click_daily_dimensions')).toEqual(expected);
    const [row] = await env.sql`SELECT clicks FROM processed_batches WHERE batch_id = ${first.batchId}`;
    expect(row?.clicks).toBe(6);
  });

  it('puts hours of different UTC days in different daily rows', async () => {
    await rollups.recordBatch(batch(clicks(linkA, nextDay - HOUR, 2, ['v1']), clicks(linkA, nextDay, 3, ['v1', 'v2'])));
    expect(await daily(linkA)).toEqual([
      { day: '2026-01-15', clicks: 2, unique: 1 },
      { day: '2026-01-16', clicks: 3, unique: 2 },
    ]);
  });

  it('adds later batches to existing rows and merges their sketches', async () => {
    await rollups.recordBatch(batch(clicks(linkA, hour0, 2, ['v1', 'v2'])));
    await rollups.recordBatch(batch(clicks(linkA, hour0, 3, ['v2', 'v3']), clicks(linkA, hour1, 1, ['v4'])));
    expect(await totals(linkA)).toEqual([
      { bucket: new Date(hour0), clicks: 5, unique: 3 },
      { bucket: new Date(hour1), clicks: 1, unique: 1 },
    ]);
    expect(await daily(linkA)).toEqual([{ day: '2026-01-15', clicks: 6, unique: 4 }]);
  });

  it('skips a batch whose id was recorded before', async () => {
    const once = batch(clicks(linkA, hour0, 1, ['v1']));
    expect(await rollups.recordBatch(once)).toBe(true);
    expect(await rollups.recordBatch(once)).toBe(false);
    expect(await totals(linkA)).toEqual([{ bucket: new Date(hour0), clicks: 1, unique: 1 }]);
    expect(await daily(linkA)).toEqual([{ day: '2026-01-15', clicks: 1, unique: 1 }]);
    expect(await dimensions(linkA, 'click_daily_dimensions')).toEqual([
      { dimension: 'browser', value: 'Chrome', clicks: 1 },
      { dimension: 'platform', value: 'ios', clicks: 1 },
    ]);
  });

  it('writes several batches in one call, sharing rows, each once, and leaves the batches unchanged', async () => {
    const recorded = batch(clicks(linkA, hour0, 100, ['old']));
    await rollups.recordBatch(recorded);
    const first = batch(clicks(linkA, hour0, 2, ['v1', 'v2']), clicks(linkB, hour1, 1, ['v9']));
    const second = batch(clicks(linkA, hour0, 1, ['v2']), clicks(linkA, hour0, 2, ['v3'], 'android'));
    const snapshot = JSON.stringify(first);

    // The same batch twice in one call, and a batch recorded earlier, add nothing extra.
    const ids = await rollups.recordBatches([first, second, first, recorded]);

    expect([...ids].sort()).toEqual([first.batchId, second.batchId].sort());
    expect(await totals(linkA)).toEqual([{ bucket: new Date(hour0), clicks: 105, unique: 4 }]);
    expect(await totals(linkB)).toEqual([{ bucket: new Date(hour1), clicks: 1, unique: 1 }]);
    for (const table of ['click_hourly_dimensions', 'click_daily_dimensions'] as const) {
      expect(await dimensions(linkA, table)).toEqual([
        { dimension: 'browser', value: 'Chrome', clicks: 105 },
        { dimension: 'platform', value: 'android', clicks: 2 },
        { dimension: 'platform', value: 'ios', clicks: 103 },
      ]);
    }
    expect(await daily(linkA)).toEqual([{ day: '2026-01-15', clicks: 105, unique: 4 }]);
    expect(JSON.stringify(first)).toBe(snapshot);
  });

  it('writes nothing from sums made by the caller when one of their batches was recorded before', async () => {
    const recorded = batch(clicks(linkA, hour0, 4, ['old']));
    await rollups.recordBatch(recorded);
    const fresh = batch(clicks(linkA, hour0, 2, ['v1']));
    const sums = new RollupRows().add(recorded.clicks).add(fresh.clicks);
    const idsOnly = [recorded, fresh].map(({ batchId, receivedClicks }) => ({ batchId, receivedClicks, clicks: [] }));

    await expect(rollups.recordBatches(idsOnly, sums)).rejects.toThrow(BatchesRecordedBefore);
    // Rolled back: the new batch is not recorded, so writing it on its own still counts it.
    expect(await totals(linkA)).toEqual([{ bucket: new Date(hour0), clicks: 4, unique: 1 }]);
    expect(await rollups.recordBatch(fresh)).toBe(true);
    expect(await totals(linkA)).toEqual([{ bucket: new Date(hour0), clicks: 6, unique: 2 }]);
  });

  it('skips rows of deleted links and still records the rest of the batch', async () => {
    await linksRepository(env.sql).delete(linkB);
    const mixed = batch(clicks(linkA, hour0, 1, ['v1']), clicks(linkB, hour0, 2, ['v2']));
    expect(await rollups.recordBatch(mixed)).toBe(true);
    expect(await totals(linkA)).toHaveLength(1);
    expect(await rowCount(linkB)).toBe(0);
  });

  it('deletes a link together with all its rollup rows', async () => {
    await rollups.recordBatch(batch(clicks(linkA, hour0, 2, ['v1']), clicks(linkB, hour0, 1, ['v2'])));
    expect(await rowCount(linkA)).toBeGreaterThan(0);
    expect(await linksRepository(env.sql).delete(linkA)).toBeDefined();
    expect(await rowCount(linkA)).toBe(0);
    expect(await rowCount(linkB)).toBeGreaterThan(0);
  });

  it('leaves no rows behind when a link is deleted while a batch for it is being written', async () => {
    // Holds the rollup transaction open after its rows are written, as a slow commit would.
    await env.sql.unsafe(`
      CREATE FUNCTION slow_rollup() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_sleep(0.5); RETURN NULL; END $$;
      CREATE TRIGGER slow_rollup AFTER INSERT ON click_daily_dimensions FOR EACH STATEMENT EXECUTE FUNCTION slow_rollup();`);
    try {
      const writing = rollups.recordBatch(batch(clicks(linkA, hour0, 3, ['v1'])));
      const sleeping = () => env.sql`
        SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'PgSleep'`;
      await expect.poll(async () => (await sleeping()).length, { interval: 10 }).toBeGreaterThan(0);
      // The delete waits for the rollup transaction to commit, then removes what it wrote.
      const deleted = await linksRepository(env.sql).delete(linkA);
      expect(await writing).toBe(true);
      expect(deleted).toBeDefined();
      expect(await rowCount(linkA)).toBe(0);
    } finally {
      await env.sql.unsafe('DROP TRIGGER slow_rollup ON click_daily_dimensions; DROP FUNCTION slow_rollup');
    }
  });

  it('stores dimension values and visitors with quotes, backslashes and other array syntax exactly', async () => {
    const odd = ['say "hi"', 'back\\slash', 'a,b', '{braces}', ' padded ', 'NULL', '', 'ünïcödé 😀', '\\"'];
    const mixed = odd.map(
      (referrer, i): RollupClick => ({
        linkId: linkA,
        bucket: hour0,
        visitor: `visitor"${i}"\\`,
        dimensions: { platform: 'ios', country: 'US', browser: 'Chrome', os: 'iOS', device: 'Mobile', referrer },
      }),
    );
    expect(await rollups.recordBatch(batch(mixed, mixed))).toBe(true);
    for (const table of ['click_hourly_dimensions', 'click_daily_dimensions'] as const) {
      const rows = await env.sql<{ value: string; clicks: number }[]>`
        SELECT value, clicks::int FROM ${env.sql(table)} WHERE link_id = ${linkA} AND dimension = 'referrer'`;
      expect(Object.fromEntries(rows.map((row) => [row.value, row.clicks]))).toEqual(Object.fromEntries(odd.map((value) => [value, 2])));
    }
    // Visitor hashes never contain a space (they are joined by spaces); anything else counts as written.
    expect(await totals(linkA)).toEqual([{ bucket: new Date(hour0), clicks: 18, unique: odd.length }]);
  });

  it('records the id of an empty batch so its redelivery is skipped too', async () => {
    const empty = { batchId: nextBatchId(), receivedClicks: 4, clicks: [] };
    expect(await rollups.recordBatch(empty)).toBe(true);
    expect(await rollups.recordBatch(empty)).toBe(false);
  });

  it('keeps exact totals when many transactions touch the same rows concurrently', async () => {
    const batches = Array.from({ length: 40 }, (_, i) => {
      // Alternate the order of rows so a naive writer would take row locks in opposite orders.
      const groups = [
        clicks(linkA, hour0, 1, [`v${i}`]),
        clicks(linkA, hour1, 2, [`v${i}`]),
        clicks(linkB, hour0, 3, [`w${i % 5}`], 'android'),
      ];
      return batch(...(i % 2 ? groups.reverse() : groups));
    });
    const results = await Promise.all(batches.map((b) => rollups.recordBatch(b)));
    expect(results.every(Boolean)).toBe(true);
    expect(await totals(linkA)).toEqual([
      { bucket: new Date(hour0), clicks: 40, unique: 40 },
      { bucket: new Date(hour1), clicks: 80, unique: 40 },
    ]);
    expect(await totals(linkB)).toEqual([{ bucket: new Date(hour0), clicks: 120, unique: 5 }]);
    expect(await daily(linkA)).toEqual([{ day: '2026-01-15', clicks: 120, unique: 40 }]);
    expect(await dimensions(linkB, 'click_daily_dimensions')).toEqual([
      { dimension: 'browser', value: 'Chrome', clicks: 120 },
      { dimension: 'platform', value: 'android', clicks: 120 },
    ]);
  });

  it('prunes only batch ids older than the cut-off', async () => {
    const old = nextBatchId();
    const recent = nextBatchId();
    await rollups.recordBatch({ batchId: old, receivedClicks: 0, clicks: [] });
    await rollups.recordBatch({ batchId: recent, receivedClicks: 0, clicks: [] });
    await env.sql`UPDATE processed_batches SET processed_at = now() - interval '10 days' WHERE batch_id = ${old}`;
    const removed = await rollups.pruneProcessedBatches(new Date(Date.now() - 7 * 24 * HOUR));
    expect(removed).toBe(1);
    const ids = (await env.sql<{ batch_id: string }[]>`SELECT batch_id FROM processed_batches`).map((r) => r.batch_id);
    expect(ids).toContain(recent);
    expect(ids).not.toContain(old);
  });

  describe('app events', () => {
    const events = (linkId: string) =>
      env.sql<{ table: string; event: string; platform: string; count: number }[]>`
        SELECT 'hourly' AS table, event, platform, sum(count)::int AS count FROM app_event_hourly WHERE link_id = ${linkId} GROUP BY 2, 3
        UNION ALL
        SELECT 'daily', event, platform, sum(count)::int FROM app_event_daily WHERE link_id = ${linkId} GROUP BY 2, 3
        ORDER BY 1, 2, 3`;
    const redirect = (linkId: string, at = hour0, visitor = 'v1'): RollupAppEvent => ({
      linkId,
      bucket: at,
      name: 'REDIRECT',
      platform: 'ANDROID',
      visitor,
    });
    const open = (linkId: string, eventId: string, visitor = eventId, at = hour1): RollupAppEvent => ({
      linkId,
      bucket: at,
      name: 'APP_RE_OPEN',
      platform: 'IOS',
      eventId,
      visitor,
    });
    /** Each event's count and distinct visitors per table, over all its rows. */
    const uniques = (linkId: string) =>
      env.sql<{ table: string; event: string; count: number; unique: number }[]>`
        SELECT 'hourly' AS table, event, sum(count)::int AS count, hll_cardinality(hll_union_agg(visitors))::int AS unique
        FROM app_event_hourly WHERE link_id = ${linkId} GROUP BY 2
        UNION ALL
        SELECT 'daily', event, sum(count)::int, hll_cardinality(hll_union_agg(visitors))::int
        FROM app_event_daily WHERE link_id = ${linkId} GROUP BY 2
        ORDER BY 1, 2`;
    const eventBatch = (appEvents: RollupAppEvent[], clicksOf: RollupClick[] = []): RollupBatch => ({
      batchId: nextBatchId(),
      receivedClicks: clicksOf.length,
      clicks: clicksOf,
      events: appEvents,
    });

    it('adds the events of a batch to the hourly and daily rows with its clicks, once with the batch id', async () => {
      const withClicks = eventBatch([redirect(linkA), redirect(linkA)], clicks(linkA, hour0, 2, ['v1']));
      expect(await rollups.recordBatch(withClicks)).toBe(true);
      expect(await rollups.recordBatch(withClicks)).toBe(false);
      expect(await events(linkA)).toEqual([
        { table: 'daily', event: 'REDIRECT', platform: 'ANDROID', count: 2 },
        { table: 'hourly', event: 'REDIRECT', platform: 'ANDROID', count: 2 },
      ]);
      expect(await totals(linkA)).toEqual([expect.objectContaining({ clicks: 2 })]);
    });

    it('counts an event with an id of its own once, across batches and within one transaction', async () => {
      expect(await rollups.recordBatch(eventBatch([open(linkA, 'open-1')]))).toBe(true);
      // The same open in a new batch (a retried call): the batch is new, the event is not.
      expect(await rollups.recordBatch(eventBatch([open(linkA, 'open-1')]))).toBe(true);
      // Twice in one transaction, beside a new one.
      await rollups.recordBatches([eventBatch([open(linkA, 'open-2')]), eventBatch([open(linkA, 'open-2'), open(linkA, 'open-3')])]);
      expect(await events(linkA)).toEqual([
        { table: 'daily', event: 'APP_RE_OPEN', platform: 'IOS', count: 3 },
        { table: 'hourly', event: 'APP_RE_OPEN', platform: 'IOS', count: 3 },
      ]);
    });

    it('keeps the distinct visitors of each event in both tables: repeated visitors once, across batches, hours and days', async () => {
      // One visitor sent to the store three times in one batch and again in the next hour, another once.
      await rollups.recordBatch(eventBatch([redirect(linkA), redirect(linkA), redirect(linkA, hour0, 'v2'), redirect(linkA, hour1)]));
      await rollups.recordBatch(eventBatch([redirect(linkA, nextDay)]));
      // One install's re-opens (its visitor) in two hours and on the next day, and two opens naming no install (their own ids).
      await rollups.recordBatches([
        eventBatch([open(linkA, 'open-a1', 'install-1'), open(linkA, 'open-a2', 'install-1', hour0)]),
        eventBatch([open(linkA, 'open-a3', 'install-1', nextDay), open(linkA, 'open-b1'), open(linkA, 'open-b2')]),
      ]);
      // A retried open (its id recorded) adds neither a count nor a visitor.
      await rollups.recordBatch(eventBatch([open(linkA, 'open-b1', 'install-9')]));
      expect(await uniques(linkA)).toEqual([
        { table: 'daily', event: 'APP_RE_OPEN', count: 5, unique: 3 },
        { table: 'daily', event: 'REDIRECT', count: 5, unique: 2 },
        { table: 'hourly', event: 'APP_RE_OPEN', count: 5, unique: 3 },
        { table: 'hourly', event: 'REDIRECT', count: 5, unique: 2 },
      ]);
      // Per row: the hour of three visits by v1 and one by v2 holds two visitors.
      const [first] = await env.sql<{ count: number; unique: number }[]>`
        SELECT count::int, hll_cardinality(visitors)::int AS unique FROM app_event_hourly
        WHERE link_id = ${linkA} AND bucket = ${new Date(hour0)} AND event = 'REDIRECT'`;
      expect(first).toEqual({ count: 3, unique: 2 });
    });

    it('deletes the event rows with their link, and skips events of deleted links', async () => {
      await rollups.recordBatch(eventBatch([redirect(linkA), redirect(linkB), open(linkB, `open-b-${batchNumber}`)]));
      expect(await events(linkB)).toHaveLength(4);
      await linksRepository(env.sql).delete(linkB);
      expect(await events(linkB)).toEqual([]);
      expect(await events(linkA)).toHaveLength(2);
      await rollups.recordBatch(eventBatch([redirect(linkB)]));
      expect(await events(linkB)).toEqual([]);
    });

    it('creates the partition of an event far from now, and prunes old event ids with the batch ids', async () => {
      const farFuture = Date.UTC(2031, 4, 2, 3);
      expect(await rollups.recordBatch(eventBatch([redirect(linkA, farFuture)]))).toBe(true);
      const [row] = await env.sql<{ day: string }[]>`SELECT day::text FROM app_event_daily WHERE link_id = ${linkA}`;
      expect(row!.day).toBe('2031-05-02');
      await rollups.recordBatch(eventBatch([open(linkA, 'old-open')]));
      await env.sql`UPDATE processed_app_events SET processed_at = now() - interval '10 days' WHERE event_id = 'old-open'`;
      await rollups.pruneProcessedBatches(new Date(Date.now() - 7 * 24 * HOUR));
      const ids = (await env.sql<{ event_id: string }[]>`SELECT event_id FROM processed_app_events`).map((r) => r.event_id);
      expect(ids).not.toContain('old-open');
      expect(ids).toContain('open-1');
    });
  });
});
