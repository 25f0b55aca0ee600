import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Sql } from '../src/db/client.js';
import { migrate } from '../src/db/migrate.js';
import { analyticsRepository } from '../src/db/analytics-repository.js';
import { partitionEnd, retentionCutoff, rollupPartitions } from '../src/db/rollup-partitions.js';
import { rollupsRepository, type RollupClick } from '../src/db/rollups-repository.js';
import { generateShortCode } from '../src/ids/short-code.js';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { adminUrl, databaseUrl } from '@deeplink/test-kit/urls';

const HOUR = 3_600_000;
const DIMENSIONS = { platform: 'ios', country: 'US', browser: 'Chrome', os: 'iOS', device: 'Mobile', referrer: 'direct' };

/** One click per hour on a link, from `from` (inclusive) to `to` (exclusive), each by a new visitor. */
const hourlyClicks = (linkId: string, from: number, to: number, dimensions = DIMENSIONS): RollupClick[] =>
  Array.from({ length: (to - from) / HOUR }, (_, i) => ({ linkId, bucket: from + i * HOUR, visitor: `v${i}`, dimensions }));

async function createLink(sql: Sql): Promise<string> {
  // Plain SQL: this runs on the schema of earlier migrations too, which the repository's columns outgrew.
  const [user] = await sql<
    { id: string }[]
  >`INSERT INTO users (name, email, password_hash) VALUES ('P', ${`p${randomBytes(4).toString('hex')}@example.com`}, 'x') RETURNING id`;
  const [link] = await sql<{ id: string }[]>`
    INSERT INTO links (user_id, code, title, default_url) VALUES (${user!.id}, ${generateShortCode()}, 'P', 'https://p.example') RETURNING id`;
  return link!.id;
}

describe('retention arithmetic', () => {
  it('keeps the current month and the given number of whole months before it', () => {
    expect(retentionCutoff(new Date('2026-11-24T06:00:00Z'), 3)).toEqual(new Date('2026-08-01T00:00:00Z'));
    expect(retentionCutoff(new Date('2027-01-01T00:00:00Z'), 13)).toEqual(new Date('2025-12-01T00:00:00Z'));
    expect(retentionCutoff(new Date('2026-11-24T06:00:00Z'), 0)).toBeUndefined();
  });

  it('reads the end of a partition from its name', () => {
    expect(partitionEnd('click_hourly_p2026_12')).toEqual(new Date('2027-01-01T00:00:00Z'));
    expect(partitionEnd('click_hourly_dimensions_p2026_01')).toEqual(new Date('2026-02-01T00:00:00Z'));
    expect(partitionEnd('click_daily_p2026')).toEqual(new Date('2027-01-01T00:00:00Z'));
    expect(partitionEnd('click_daily_archive')).toBeUndefined();
  });
});

describe('rollup partitions', () => {
  let env: TestEnvironment;
  let partitions: ReturnType<typeof rollupPartitions>;

  beforeAll(async () => {
    env = await createTestEnvironment();
    partitions = rollupPartitions(env.sql);
  });
  afterAll(() => env.close());

  const partitionOf = async (table: string, linkId: string) =>
    (
      await env.sql<
        { partition: string }[]
      >`SELECT DISTINCT tableoid::regclass::text AS partition FROM ${env.sql(table)} WHERE link_id = ${linkId}`
    ).map((row) => row.partition);

  it('creates the partitions of the current and the next two months ahead, and a year ahead for daily rows', async () => {
    const now = new Date('2031-11-20T12:00:00Z');
    const { created, dropped } = await partitions.maintain(now, { hourlyMonths: 0, dailyMonths: 0 });
    expect(created).toEqual([
      'app_event_daily_p2031',
      'app_event_daily_p2032',
      'app_event_hourly_p2031_11',
      'app_event_hourly_p2031_12',
      'app_event_hourly_p2032_01',
      'click_daily_combinations_p2031',
      'click_daily_combinations_p2032',
      'click_daily_dimensions_p2031',
      'click_daily_dimensions_p2032',
      'click_daily_p2031',
      'click_daily_p2032',
      'click_hourly_combination_referrers_p2031_11',
      'click_hourly_combination_referrers_p2031_12',
      'click_hourly_combination_referrers_p2032_01',
      'click_hourly_combinations_p2031_11',
      'click_hourly_combinations_p2031_12',
      'click_hourly_combinations_p2032_01',
      'click_hourly_dimensions_p2031_11',
      'click_hourly_dimensions_p2031_12',
      'click_hourly_dimensions_p2032_01',
      'click_hourly_p2031_11',
      'click_hourly_p2031_12',
      'click_hourly_p2032_01',
    ]);
    expect(dropped).toEqual([]);
    // A second run on the same day has nothing to do.
    expect(await partitions.maintain(now, { hourlyMonths: 0, dailyMonths: 0 })).toEqual({ created: [], dropped: [], deletedDailyRows: 0 });
    // Rows of an hour and a day at the edges of the partitions land in them.
    const linkId = await createLink(env.sql);
    await rollupsRepository(env.sql).recordBatch({
      batchId: 'edges',
      receivedClicks: 2,
      clicks: hourlyClicks(linkId, Date.UTC(2031, 11, 31, 23), Date.UTC(2032, 0, 1, 1)),
    });
    expect((await partitionOf('click_hourly', linkId)).sort()).toEqual(['click_hourly_p2031_12', 'click_hourly_p2032_01']);
    expect((await partitionOf('click_daily_dimensions', linkId)).sort()).toEqual([
      'click_daily_dimensions_p2031',
      'click_daily_dimensions_p2032',
    ]);
  });

  it('creates a missing partition when a batch reaches a month that has none, and counts the batch once', async () => {
    const linkId = await createLink(env.sql);
    const rollups = rollupsRepository(env.sql);
    const bucket = Date.UTC(2019, 4, 7, 13);
    expect(await partitions.list()).not.toContain('click_hourly_p2019_05');
    expect(await rollups.recordBatch({ batchId: 'late', receivedClicks: 1, clicks: hourlyClicks(linkId, bucket, bucket + HOUR) })).toBe(
      true,
    );
    expect(await rollups.recordBatch({ batchId: 'late', receivedClicks: 1, clicks: hourlyClicks(linkId, bucket, bucket + HOUR) })).toBe(
      false,
    );
    expect(await partitions.list()).toEqual(
      expect.arrayContaining([
        'click_hourly_p2019_05',
        'click_hourly_dimensions_p2019_05',
        'click_daily_p2019',
        'click_daily_dimensions_p2019',
      ]),
    );
    expect(await partitionOf('click_hourly', linkId)).toEqual(['click_hourly_p2019_05']);
    const [row] = await env.sql<{ clicks: number }[]>`SELECT sum(clicks)::int AS clicks FROM click_daily WHERE link_id = ${linkId}`;
    expect(row!.clicks).toBe(1);
  });

  it('drops whole partitions past the retention, and daily rows past the daily retention, as the clock moves on', async () => {
    const linkId = await createLink(env.sql);
    const combinationRows = async (table: string) =>
      (await env.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM ${env.sql(table)} WHERE link_id = ${linkId}`)[0]!.n;
    // An hourly click from March 2023 through the end of February 2024, each from t.co (a named referrer host of its hour).
    await rollupsRepository(env.sql).recordBatch({
      batchId: 'year',
      receivedClicks: 0,
      clicks: hourlyClicks(linkId, Date.UTC(2023, 2, 1), Date.UTC(2024, 2, 1), { ...DIMENSIONS, referrer: 't.co' }),
    });
    expect(await combinationRows('click_hourly_combinations')).toBe(366 * 24);
    expect(await combinationRows('click_hourly_combination_referrers')).toBe(366 * 24);
    const hourlyOf = async () => (await partitions.list()).filter((name) => /^click_hourly_p(2023_|2024_0[12])/.test(name));
    expect(await hourlyOf()).toHaveLength(12);
    const analytics = analyticsRepository(env.sql);
    const report = (start: number, end: number, timeBucket: 'hour' | 'month' = 'month') =>
      analytics.linkReport(linkId, { start: new Date(start), end: new Date(end), timeBucket }, ['country']);

    // The worker rolls each day's combination rows into daily ones once the day is over, long
    // before its hours are dropped (and the partition task rolls any day left first).
    await rollupsRepository(env.sql).rollCombinationDays(new Date('2024-06-10T08:00:00Z'));
    // On 2024-06-10 with three months of hourly rollups kept: March 2024 onwards; daily kept for 15 months.
    let result = await partitions.maintain(new Date('2024-06-10T08:00:00Z'), { hourlyMonths: 3, dailyMonths: 15 });
    const droppedHourly = result.dropped.filter((name) => name.startsWith('click_hourly_p'));
    expect(droppedHourly).toEqual(expect.arrayContaining(['click_hourly_p2023_03', 'click_hourly_p2024_02']));
    expect(await hourlyOf()).toEqual([]);
    // The combination rows and their named referrers go with the other hourly rollups.
    expect(result.dropped).toEqual(
      expect.arrayContaining([
        'click_hourly_combinations_p2023_03',
        'click_hourly_combinations_p2024_02',
        'click_hourly_combination_referrers_p2023_03',
        'click_hourly_combination_referrers_p2024_02',
      ]),
    );
    expect(await combinationRows('click_hourly_combinations')).toBe(0);
    expect(await combinationRows('click_hourly_combination_referrers')).toBe(0);
    expect(await combinationRows('click_daily_combinations')).toBe(366);
    expect(result.dropped).not.toContain('click_daily_p2023');
    expect(result.deletedDailyRows).toBe(0);
    // The hours are gone (an hourly series is empty); the days are all there, so totals are unchanged.
    expect((await report(Date.UTC(2023, 2, 1), Date.UTC(2024, 2, 1), 'hour')).series.size).toBe(0);
    expect((await report(Date.UTC(2023, 2, 1), Date.UTC(2024, 2, 1))).totalClicks).toBe(366 * 24);

    // In July, 15 months of daily rollups reach back to April 2023: the days of March 2023 go.
    result = await partitions.maintain(new Date('2024-07-02T00:00:00Z'), { hourlyMonths: 3, dailyMonths: 15 });
    // 2023-03-01 .. 2023-03-31: 31 days, each with one total row, six dimension rows and one combination row.
    expect(result.deletedDailyRows).toBe(31 * 8);
    expect(await combinationRows('click_daily_combinations')).toBe(366 - 31);
    expect((await report(Date.UTC(2023, 2, 1), Date.UTC(2024, 2, 1))).totalClicks).toBe((366 - 31) * 24);

    // Once every day of 2023 is older than the cutoff, its daily partitions are dropped whole.
    result = await partitions.maintain(new Date('2025-04-15T00:00:00Z'), { hourlyMonths: 3, dailyMonths: 15 });
    expect(result.dropped).toEqual(
      expect.arrayContaining(['click_daily_p2023', 'click_daily_dimensions_p2023', 'click_daily_combinations_p2023']),
    );
    expect(await combinationRows('click_daily_combinations')).toBe(31 + 29);
    expect(result.dropped).not.toContain('click_daily_p2024');
    expect((await report(Date.UTC(2023, 2, 1), Date.UTC(2024, 2, 1))).totalClicks).toBe((31 + 29) * 24);
  });
});

describe('migration 003 with rollups present', () => {
  const name = `deeplink_test_m3_${randomBytes(4).toString('hex')}`;
  let sql: Sql;

  beforeAll(async () => {
    const admin = createDatabase(adminUrl(), { max: 1 });
    await admin.unsafe(`CREATE DATABASE ${name}`).finally(() => admin.end());
    sql = createDatabase(databaseUrl(name), { max: 1 });
  });
  afterAll(async () => {
    await sql?.end();
    const admin = createDatabase(adminUrl(), { max: 1 });
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).finally(() => admin.end());
  });

  it('moves every hourly and daily row into partitions, numbers unchanged', async () => {
    expect(await migrate(sql, undefined, '002')).toBe(2);
    const linkId = await createLink(sql);
    // Rows as the previous schema's writer left them (one click an hour, its six dimension rows,
    // the days' sums), across a year boundary; the session's time zone is not UTC, so partition
    // bounds must not depend on it. Written in SQL: today's writer also fills tables of later migrations.
    await sql`SET TimeZone = 'America/New_York'`;
    await sql`
      WITH hours AS (
        SELECT i, ${new Date(Date.UTC(2025, 11, 30, 20)).toISOString()}::timestamptz + i * interval '1 hour' AS bucket
        FROM generate_series(0, 775) AS i
      ), hourly AS (
        INSERT INTO click_hourly (link_id, bucket, clicks, visitors)
        SELECT ${linkId}, bucket, 1, hll_add(hll_empty(), hll_hash_text('v' || i)) FROM hours
      ), hourly_dimensions AS (
        INSERT INTO click_hourly_dimensions (link_id, bucket, dimension, value, clicks)
        SELECT ${linkId}, bucket, d.key, d.value, 1 FROM hours, unnest(${Object.keys(DIMENSIONS)}::text[], ${Object.values(DIMENSIONS)}::text[]) AS d(key, value)
      ), daily AS (
        INSERT INTO click_daily (link_id, day, clicks, visitors)
        SELECT ${linkId}, (bucket AT TIME ZONE 'UTC')::date, count(*), hll_add_agg(hll_hash_text('v' || i)) FROM hours GROUP BY 2
      )
      INSERT INTO click_daily_dimensions (link_id, dimension, day, value, clicks)
      SELECT ${linkId}, d.key, (bucket AT TIME ZONE 'UTC')::date, d.value, count(*)
      FROM hours, unnest(${Object.keys(DIMENSIONS)}::text[], ${Object.values(DIMENSIONS)}::text[]) AS d(key, value) GROUP BY 2, 3, 4`;
    const snapshot = () =>
      sql.unsafe(`SELECT 'h' AS t, link_id::text, bucket::text AS k, clicks::text, hll_cardinality(visitors)::text AS u FROM click_hourly
                  UNION ALL SELECT 'hd', link_id::text, bucket::text || dimension || value, clicks::text, '' FROM click_hourly_dimensions
                  UNION ALL SELECT 'd', link_id::text, day::text, clicks::text, hll_cardinality(visitors)::text FROM click_daily
                  UNION ALL SELECT 'dd', link_id::text, day::text || dimension || value, clicks::text, '' FROM click_daily_dimensions
                  ORDER BY 1, 2, 3`);
    const before = await snapshot();
    // 776 hours (4 on 30 December, 24, 744 in January, 4 on 1 February) over 34 days, each with six dimension rows.
    expect(before.length).toBe(776 * 7 + 34 * 7);

    expect(await migrate(sql)).toBeGreaterThanOrEqual(3);
    expect(await snapshot()).toEqual(before);
    const partitioned = await sql<
      { table: string }[]
    >`SELECT c.relname AS table FROM pg_partitioned_table p JOIN pg_class c ON c.oid = p.partrelid ORDER BY 1`;
    expect(partitioned.map((row) => row.table)).toEqual([
      'app_event_daily',
      'app_event_hourly',
      'click_daily',
      'click_daily_combinations',
      'click_daily_dimensions',
      'click_hourly',
      'click_hourly_combination_referrers',
      'click_hourly_combinations',
      'click_hourly_dimensions',
    ]);
    const [{ rows }] = (await sql`SELECT count(*)::int AS rows FROM ONLY click_hourly_p2026_01`) as unknown as [{ rows: number }];
    expect(rows).toBe(31 * 24);
    expect(await rollupPartitions(sql).list()).toEqual(
      expect.arrayContaining([
        'click_daily_p2025',
        'click_daily_p2026',
        'click_hourly_p2025_12',
        'click_hourly_p2026_01',
        'click_hourly_p2026_02',
      ]),
    );
    // The writer goes on where it left off.
    expect(
      await rollupsRepository(sql).recordBatch({
        batchId: 'after',
        receivedClicks: 0,
        clicks: hourlyClicks(linkId, Date.UTC(2026, 1, 1, 4), Date.UTC(2026, 1, 1, 5)),
      }),
    ).toBe(true);
    const [total] = await sql<{ clicks: number }[]>`SELECT sum(clicks)::int AS clicks FROM click_daily WHERE link_id = ${linkId}`;
    expect(total!.clicks).toBe(776 + 1);
  });
});

describe('migration 019 with combination rows present', () => {
  const name = `deeplink_test_m19_${randomBytes(4).toString('hex')}`;
  let sql: Sql;

  beforeAll(async () => {
    const admin = createDatabase(adminUrl(), { max: 1 });
    await admin.unsafe(`CREATE DATABASE ${name}`).finally(() => admin.end());
    sql = createDatabase(databaseUrl(name), { max: 2 });
  });
  afterAll(async () => {
    await sql?.end();
    const admin = createDatabase(adminUrl(), { max: 1 });
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).finally(() => admin.end());
  });

  it("counts the days written before it as rolled, today's and tomorrow's too, and each click once after it", async () => {
    expect(await migrate(sql, undefined, '017')).toBe(17);
    const linkId = await createLink(sql);
    // Rows as the previous release's writer left them: two hours of 2026-01-15 and their day.
    await sql`SELECT ensure_rollup_partition('click_hourly_combinations', 'month', '2026-01-15T00:00:00Z')`;
    await sql`
      WITH hours AS (
        SELECT ${new Date(Date.UTC(2026, 0, 15, 10)).toISOString()}::timestamptz + i * interval '1 hour' AS bucket, i FROM generate_series(0, 1) AS i
      ), hourly AS (
        INSERT INTO click_hourly_combinations (link_id, bucket, platform, device, country, browser, os, referrer, clicks, visitors)
        SELECT ${linkId}, bucket, 'ios', 'Mobile', 'US', 'Chrome', 'iOS', 'direct', 2, hll_add(hll_empty(), hll_hash_text('v' || i)) FROM hours
      )
      INSERT INTO click_daily_combinations (link_id, day, platform, device, country, browser, os, referrer, clicks, visitors)
      SELECT ${linkId}, '2026-01-15', 'ios', 'Mobile', 'US', 'Chrome', 'iOS', 'direct', 4, hll_add_agg(hll_hash_text('v' || i)) FROM hours`;

    expect(await migrate(sql)).toBeGreaterThanOrEqual(19);
    const [clock] = await sql<{ today: string }[]>`SELECT (now() AT TIME ZONE 'UTC')::date::text AS today`;
    const today = clock!.today;
    const tomorrow = new Date(Date.parse(today) + 24 * HOUR).toISOString().slice(0, 10);
    const days = await sql<{ day: string; rolled: boolean }[]>`SELECT day::text, rolled FROM click_combination_days ORDER BY day`;
    expect(days).toEqual([
      { day: '2026-01-15', rolled: true },
      { day: today, rolled: true },
      { day: tomorrow, rolled: true },
    ]);
    const dayTotal = async () =>
      (
        await sql<{ clicks: number; unique: number }[]>`
          SELECT sum(clicks)::int AS clicks, hll_cardinality(hll_union_agg(visitors))::int AS unique
          FROM click_daily_combinations_read WHERE link_id = ${linkId} AND day = '2026-01-15'`
      )[0];
    // The stored day, read once (not its hours on top).
    expect(await dayTotal()).toEqual({ clicks: 4, unique: 2 });

    // A late batch of that day adds to its daily rows; a roll leaves the day alone.
    const rollups = rollupsRepository(sql);
    const late = { ...DIMENSIONS, browser: 'Chrome' };
    expect(
      await rollups.recordBatch({
        batchId: 'late-019',
        receivedClicks: 1,
        clicks: [{ linkId, bucket: Date.UTC(2026, 0, 15, 11), visitor: 'v9', dimensions: late }],
      }),
    ).toBe(true);
    expect((await rollups.rollCombinationDays(new Date(Date.UTC(2026, 0, 17)))).days).toEqual([]);
    expect(await dayTotal()).toEqual({ clicks: 5, unique: 3 });
  });
});
