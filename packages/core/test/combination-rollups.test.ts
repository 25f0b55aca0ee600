import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { COMBINATION_COLUMNS, COMBINATION_REFERRERS_PER_HOUR } from '../src/analytics/combinations.js';
import { DIMENSION_NAMES, type DimensionValues, OTHER } from '../src/analytics/dimensions.js';
import { linksRepository } from '../src/db/links-repository.js';
import { RollupRows, rollupsRepository, type RollupBatch, type RollupClick } from '../src/db/rollups-repository.js';
import { usersRepository } from '../src/db/users-repository.js';
import { generateShortCode } from '../src/ids/short-code.js';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const hour0 = Date.UTC(2026, 0, 15, 22);
const hour1 = hour0 + HOUR;
/** The next UTC day. */
const hour2 = hour0 + 2 * HOUR;

const BASE: DimensionValues = { platform: 'ios', country: 'US', browser: 'Mobile Safari', os: 'iOS', device: 'Mobile', referrer: 'direct' };
const VARIANTS: Partial<DimensionValues>[] = [
  {},
  { country: 'DE' },
  { platform: 'android', browser: 'Chrome', os: 'Android', referrer: 't.co' },
  { platform: 'desktop', device: 'Desktop', browser: 'Firefox', os: 'Windows', country: 'Unknown' },
  { referrer: 'www.google.com', country: 'FR' },
  { platform: 'android', browser: 'Samsung Internet', os: 'Android', referrer: 'l.instagram.com' },
];

/** `n` clicks on a link in one hour, cycling through VARIANTS and `visitors` (a click's variant and visitor are independent). */
const clicks = (linkId: string, bucket: number, n: number, visitors: string[], extra: Partial<DimensionValues> = {}): RollupClick[] =>
  Array.from({ length: n }, (_, i) => ({
    linkId,
    bucket,
    visitor: visitors[i % visitors.length]!,
    dimensions: { ...BASE, ...VARIANTS[i % VARIANTS.length], ...extra },
  }));

/** One click from each of `hosts`, by a visitor of its own. */
const hostClicks = (linkId: string, bucket: number, hosts: string[]): RollupClick[] =>
  hosts.map((referrer, i) => ({ linkId, bucket, visitor: `h${i}-${referrer}`, dimensions: { ...BASE, referrer } }));

const hosts = (from: number, to: number, prefix = 'site') => Array.from({ length: to - from }, (_, i) => `${prefix}${from + i}.example`);

describe('combination rollups', () => {
  let env: TestEnvironment;
  let rollups: ReturnType<typeof rollupsRepository>;
  let userId: string;
  let linkA: string;
  let linkB: string;
  let batchNumber = 0;
  const batch = (...groups: RollupClick[][]): RollupBatch => {
    const all = groups.flat();
    return { batchId: `combination-batch-${++batchNumber}`, receivedClicks: all.length, clicks: all };
  };

  beforeAll(async () => {
    env = await createTestEnvironment();
    rollups = rollupsRepository(env.sql);
    userId = (await usersRepository(env.sql).create({ name: 'C', email: 'combinations@example.com', passwordHash: 'x' }))!.id;
  });
  afterAll(() => env.close());
  beforeEach(async () => {
    const links = linksRepository(env.sql);
    linkA = (await links.create(userId, generateShortCode(), { title: 'A', defaultUrl: 'https://a.example' })).id;
    linkB = (await links.create(userId, generateShortCode(), { title: 'B', defaultUrl: 'https://b.example' })).id;
  });

  /**
   * The daily combination rows as the reports read them: the stored ones of rolled days, the hours
   * summed for the others (migration 019).
   */
  const DAILY_COMBINATIONS = 'click_daily_combinations_read';

  /** Per hour (or day): the clicks and distinct visitors of the combination rows, and of the total rows. */
  const totalsAgainstCombinations = async (linkId: string, period: 'hourly' | 'daily', daily = DAILY_COMBINATIONS) => {
    const [totals, combinations] = period === 'hourly' ? ['click_hourly', 'click_hourly_combinations'] : ['click_daily', daily];
    const time = period === 'hourly' ? 'bucket' : 'day';
    const read = (table: string) =>
      env.sql<{ at: string; clicks: number; unique: number }[]>`
        SELECT ${env.sql(time)}::text AS at, sum(clicks)::int AS clicks, hll_cardinality(hll_union_agg(visitors))::int AS unique
        FROM ${env.sql(table)} WHERE link_id = ${linkId} GROUP BY 1 ORDER BY 1`;
    return { totals: await read(totals!), combinations: await read(combinations!) };
  };

  /** Per hour (or day), dimension and value: the clicks of the per-dimension rows, and those of the combination rows. */
  const dimensionsAgainstCombinations = async (linkId: string, period: 'hourly' | 'daily', daily = DAILY_COMBINATIONS) => {
    type Row = { at: string; dimension: string; value: string; clicks: number };
    const time = env.sql(period === 'hourly' ? 'bucket' : 'day');
    const dimensions = await env.sql<Row[]>`
      SELECT ${time}::text AS at, dimension, value, clicks::int FROM ${env.sql(`click_${period}_dimensions`)}
      WHERE link_id = ${linkId}`;
    const combinations: Row[] = [];
    for (const name of DIMENSION_NAMES) {
      combinations.push(
        ...(await env.sql<Row[]>`
          SELECT ${time}::text AS at, ${name}::text AS dimension, ${env.sql(name)} AS value, sum(clicks)::int AS clicks
          FROM ${env.sql(period === 'hourly' ? 'click_hourly_combinations' : daily)} WHERE link_id = ${linkId} GROUP BY 1, 3`),
      );
    }
    const key = (row: Row) => JSON.stringify([row.at, row.dimension, row.value]);
    const sorted = (rows: Row[]) => rows.map((row) => ({ ...row })).sort((a, b) => (key(a) < key(b) ? -1 : 1));
    return { dimensions: sorted([...dimensions]), combinations: sorted(combinations) };
  };

  const referrersOf = async (linkId: string, bucket: number) =>
    (
      await env.sql<{ referrer: string; clicks: number }[]>`
        SELECT referrer, sum(clicks)::int AS clicks FROM click_hourly_combinations WHERE link_id = ${linkId} AND bucket = ${new Date(bucket)}
        GROUP BY 1`
    ).reduce<Record<string, number>>((all, row) => Object.assign(all, { [row.referrer]: row.clicks }), {});
  const dimensionReferrers = async (linkId: string, bucket: number) =>
    (
      await env.sql<{ value: string }[]>`
        SELECT value FROM click_hourly_dimensions WHERE link_id = ${linkId} AND dimension = 'referrer' AND bucket = ${new Date(bucket)}`
    ).map((row) => row.value);

  it('names the table columns after every dimension of the registry', () => {
    expect([...COMBINATION_COLUMNS].sort()).toEqual([...DIMENSION_NAMES].sort());
  });

  it('sums two clicks that differ in any one dimension into two combinations', () => {
    for (const name of DIMENSION_NAMES) {
      const other: RollupClick = { linkId: linkA, bucket: hour0, visitor: 'v2', dimensions: { ...BASE, [name]: 'different' } };
      const { combinations } = new RollupRows().add([{ linkId: linkA, bucket: hour0, visitor: 'v1', dimensions: BASE }, other]).toArrays();
      expect(combinations.clicks, name).toEqual([1, 1]);
      expect(combinations.columns[name], name).toEqual([BASE[name], 'different']);
    }
  });

  it('adds up exactly to the total rows and to every per-dimension row, hourly and daily, across batches and shared transactions', async () => {
    await rollups.recordBatch(batch(clicks(linkA, hour0, 30, ['v1', 'v2', 'v3', 'v4', 'v5']), clicks(linkB, hour0, 7, ['w1'])));
    await rollups.recordBatches([
      batch(clicks(linkA, hour0, 13, ['v4', 'v6', 'v7']), clicks(linkA, hour1, 9, ['v1', 'v8'])),
      batch(clicks(linkA, hour2, 11, ['v9', 'v1']), clicks(linkA, hour1, 5, ['v10'], { country: 'JP' })),
    ]);
    for (const linkId of [linkA, linkB]) {
      for (const period of ['hourly', 'daily'] as const) {
        const { totals, combinations } = await totalsAgainstCombinations(linkId, period);
        expect(combinations).toEqual(totals);
        const byDimension = await dimensionsAgainstCombinations(linkId, period);
        expect(byDimension.combinations).toEqual(byDimension.dimensions);
      }
    }
    const { totals } = await totalsAgainstCombinations(linkA, 'hourly');
    expect(totals.map((row) => row.clicks)).toEqual([43, 14, 11]);
    // One row per distinct combination: the six variants, and four more of the JP clicks (two of their variants differed by country only).
    const [row] = await env.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM click_hourly_combinations WHERE link_id = ${linkA} AND bucket = ${new Date(hour1)}`;
    expect(row!.n).toBe(6 + 4);
  });

  it('keeps the visitors of each combination apart', async () => {
    // Two German iPhone visitors (one of them twice), one French: a filter on country reads them apart.
    const at = (visitor: string, country: string): RollupClick => ({
      linkId: linkA,
      bucket: hour0,
      visitor,
      dimensions: { ...BASE, country },
    });
    await rollups.recordBatch(batch([at('v1', 'DE'), at('v2', 'DE'), at('v1', 'DE'), at('v3', 'FR')]));
    const rows = await env.sql<{ country: string; clicks: number; unique: number }[]>`
      SELECT country, clicks::int, hll_cardinality(visitors)::int AS unique FROM click_hourly_combinations
      WHERE link_id = ${linkA} ORDER BY country`;
    expect(rows).toEqual([
      { country: 'DE', clicks: 3, unique: 2 },
      { country: 'FR', clicks: 1, unique: 1 },
    ]);
  });

  it('adds nothing for a batch recorded before, alone or in a shared transaction', async () => {
    const once = batch(clicks(linkA, hour0, 12, ['v1', 'v2']));
    expect(await rollups.recordBatch(once)).toBe(true);
    expect(await rollups.recordBatch(once)).toBe(false);
    // A shared transaction holding the recorded batch: the new one is added on its own.
    const fresh = batch(clicks(linkA, hour0, 6, ['v3']), hostClicks(linkA, hour0, ['new.example']));
    expect([...(await rollups.recordBatches([once, fresh]))]).toEqual([fresh.batchId]);
    // Sums made by the caller that hold a recorded batch write nothing.
    const late = batch(clicks(linkA, hour0, 2, ['v4']));
    const sums = new RollupRows().add(once.clicks).add(late.clicks);
    await expect(
      rollups.recordBatches(
        [once, late].map(({ batchId }) => ({ batchId, receivedClicks: 0, clicks: [] })),
        sums,
      ),
    ).rejects.toThrow();

    expect(await referrersOf(linkA, hour0)).toEqual({ direct: 9, 't.co': 3, 'www.google.com': 3, 'l.instagram.com': 3, 'new.example': 1 });
    const { totals, combinations } = await totalsAgainstCombinations(linkA, 'daily');
    expect(totals).toEqual([{ at: '2026-01-15', clicks: 19, unique: 4 }]);
    expect(combinations).toEqual(totals);
  });

  it(`names the first ${COMBINATION_REFERRERS_PER_HOUR} referrer hosts of a link-hour and counts later ones under ${OTHER}`, async () => {
    const first = hosts(0, COMBINATION_REFERRERS_PER_HOUR);
    await rollups.recordBatch(batch(hostClicks(linkA, hour0, first), clicks(linkA, hour0, 4, ['d1'], { referrer: 'direct' })));
    // The 101st and 102nd hosts, one of the first again, and direct: only the new hosts are folded.
    await rollups.recordBatch(batch(hostClicks(linkA, hour0, ['late1.example', 'late2.example', first[7]!, 'late1.example', 'direct'])));

    const named = await referrersOf(linkA, hour0);
    expect(named).toEqual({
      ...Object.fromEntries(first.map((host) => [host, host === first[7] ? 2 : 1])),
      direct: 5,
      [OTHER]: 3,
    });
    // The per-dimension rows keep every host.
    expect((await dimensionReferrers(linkA, hour0)).sort()).toEqual([...first, 'direct', 'late1.example', 'late2.example'].sort());
    const byDimension = await dimensionsAgainstCombinations(linkA, 'hourly');
    const withoutReferrers = <T extends { dimension: string }>(rows: T[]) => rows.filter((row) => row.dimension !== 'referrer');
    expect(withoutReferrers(byDimension.combinations)).toEqual(withoutReferrers(byDimension.dimensions));

    // The next hour starts afresh; another link's hour is its own.
    await rollups.recordBatch(batch(hostClicks(linkA, hour1, ['late1.example']), hostClicks(linkB, hour0, ['late2.example'])));
    expect(await referrersOf(linkA, hour1)).toEqual({ 'late1.example': 1 });
    expect(await referrersOf(linkB, hour0)).toEqual({ 'late2.example': 1 });

    // The daily rows are the hours' rows summed: the folded clicks stay folded.
    const daily = await env.sql<{ referrer: string; clicks: number }[]>`
      SELECT referrer, sum(clicks)::int AS clicks FROM ${env.sql(DAILY_COMBINATIONS)}
      WHERE link_id = ${linkA} AND referrer IN ('late1.example', ${OTHER}) GROUP BY 1`;
    expect(Object.fromEntries(daily.map((row) => [row.referrer, row.clicks]))).toEqual({ [OTHER]: 3, 'late1.example': 1 });
  });

  it('gives the free places of an hour to the hosts with the most clicks when one transaction brings more hosts than there are places', async () => {
    await rollups.recordBatch(batch(hostClicks(linkA, hour0, hosts(0, COMBINATION_REFERRERS_PER_HOUR - 2))));
    // Three new hosts for two places: the one with three clicks and, of the two with one, the first by name.
    await rollups.recordBatch(
      batch(hostClicks(linkA, hour0, ['b.example', 'popular.example', 'a.example', 'popular.example', 'popular.example'])),
    );
    const named = await referrersOf(linkA, hour0);
    expect(named['popular.example']).toBe(3);
    expect(named['a.example']).toBe(1);
    expect(named['b.example']).toBeUndefined();
    expect(named[OTHER]).toBe(1);
    expect(Object.keys(named)).toHaveLength(COMBINATION_REFERRERS_PER_HOUR + 1);
  });

  it('stores a value that is already Other under Other, and values with array syntax exactly', async () => {
    const odd = ['say "hi"', 'back\\slash', 'a,b', '{braces}', ' padded ', 'NULL', '', 'ünïcödé 😀'];
    const mixed = odd.map(
      (value, i): RollupClick => ({
        linkId: linkA,
        bucket: hour0,
        visitor: `visitor"${i}"\\`,
        dimensions: { platform: 'ios', country: value, browser: value, os: 'iOS', device: 'Mobile', referrer: value },
      }),
    );
    await rollups.recordBatch(batch(mixed, mixed, hostClicks(linkA, hour0, [OTHER])));
    const rows = await env.sql<{ country: string; browser: string; referrer: string; clicks: number }[]>`
      SELECT country, browser, referrer, clicks::int FROM click_hourly_combinations WHERE link_id = ${linkA}`;
    expect(Object.fromEntries(rows.map((row) => [`${row.country}|${row.browser}|${row.referrer}`, row.clicks]))).toEqual({
      ...Object.fromEntries(odd.map((value) => [`${value}|${value}|${value}`, 2])),
      [`US|Mobile Safari|${OTHER}`]: 1,
    });
  });

  it('keeps exact sums when concurrent transactions bring new hosts to the same hours, and names about the bound', async () => {
    // 40 transactions at once, each with 5 new hosts and 5 shared ones, on two hours in alternating order.
    const batches = Array.from({ length: 40 }, (_, i) => {
      const groups = [hostClicks(linkA, hour0, [...hosts(i * 5, i * 5 + 5), ...hosts(0, 5, 'shared')]), clicks(linkA, hour1, 6, [`v${i}`])];
      return batch(...(i % 2 ? groups.reverse() : groups));
    });
    expect((await Promise.all(batches.map((b) => rollups.recordBatch(b)))).every(Boolean)).toBe(true);

    for (const period of ['hourly', 'daily'] as const) {
      const { totals, combinations } = await totalsAgainstCombinations(linkA, period);
      expect(combinations).toEqual(totals);
    }
    const named = await referrersOf(linkA, hour0);
    expect(Object.values(named).reduce((a, b) => a + b, 0)).toBe(400);
    const names = Object.keys(named).filter((host) => host !== OTHER);
    // Each transaction reads the names committed before its statement: the places fill, and the
    // other transactions in flight at that moment (at most three more: the pool holds four
    // connections) can add their five new hosts each.
    expect(names.length).toBeGreaterThanOrEqual(COMBINATION_REFERRERS_PER_HOUR);
    expect(names.length).toBeLessThanOrEqual(COMBINATION_REFERRERS_PER_HOUR + 3 * 5);
    const recorded = await env.sql<{ referrer: string }[]>`
      SELECT referrer FROM click_hourly_combination_referrers WHERE link_id = ${linkA} AND bucket = ${new Date(hour0)}`;
    expect(recorded.map((row) => row.referrer).sort()).toEqual(names.sort());
    expect(await dimensionReferrers(linkA, hour0)).toHaveLength(205);
  });

  /** The daily combination rows stored for a link and day (the roll's, or a late batch's). */
  const storedDailyRows = async (linkId: string, day: string) => {
    const [row] = await env.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM click_daily_combinations WHERE link_id = ${linkId} AND day = ${day}::date`;
    return row!.n;
  };

  /** Every daily comparison of a link, from the stored rows alone and as the reports read them. */
  const expectDailyExact = async (linkId: string, stored: boolean) => {
    for (const daily of stored ? ['click_daily_combinations', DAILY_COMBINATIONS] : [DAILY_COMBINATIONS]) {
      const { totals, combinations } = await totalsAgainstCombinations(linkId, 'daily', daily);
      expect(combinations, daily).toEqual(totals);
      const byDimension = await dimensionsAgainstCombinations(linkId, 'daily', daily);
      expect(byDimension.combinations, daily).toEqual(byDimension.dimensions);
    }
  };

  it('rolls a day that is over into its daily rows once, and reads the same numbers before and after', async () => {
    const day = Date.UTC(2026, 1, 10);
    await rollups.recordBatch(
      batch(
        clicks(linkA, day + 3 * HOUR, 20, ['v1', 'v2', 'v3']),
        clicks(linkA, day + 17 * HOUR, 8, ['v2', 'v4'], { country: 'JP' }),
        clicks(linkB, day + 5 * HOUR, 4, ['w1']),
      ),
    );
    // Before the day is over: it is not rolled, no daily row is stored, the reports sum its hours.
    expect((await rollups.rollCombinationDays(new Date(day + 23 * HOUR))).days).not.toContain('2026-02-10');
    expect(await storedDailyRows(linkA, '2026-02-10')).toBe(0);
    await expectDailyExact(linkA, false);
    const before = await dimensionsAgainstCombinations(linkA, 'daily');

    expect((await rollups.rollCombinationDays(new Date(day + DAY))).days).toContain('2026-02-10');
    // The six variants, and five of the JP clicks (two of their variants differ by country only).
    expect(await storedDailyRows(linkA, '2026-02-10')).toBe(6 + 5);
    for (const linkId of [linkA, linkB]) await expectDailyExact(linkId, true);
    expect((await dimensionsAgainstCombinations(linkA, 'daily')).combinations).toEqual(before.combinations);
    const { totals } = await totalsAgainstCombinations(linkA, 'daily');
    expect(totals).toEqual([{ at: '2026-02-10', clicks: 28, unique: 4 }]);

    // Once: a later roll leaves the day alone.
    expect((await rollups.rollCombinationDays(new Date(day + 2 * DAY))).days).not.toContain('2026-02-10');
    await expectDailyExact(linkA, true);
  });

  it('counts a late batch for a day rolled already exactly once', async () => {
    const day = Date.UTC(2026, 1, 12);
    await rollups.recordBatch(batch(clicks(linkA, day + 9 * HOUR, 12, ['v1', 'v2'])));
    expect((await rollups.rollCombinationDays(new Date(day + DAY))).days).toContain('2026-02-12');
    // Late: an hour of the rolled day again, then two hours of it in one transaction beside a
    // batch recorded before (which adds nothing), then the same late batch again.
    const late = batch(clicks(linkA, day + 9 * HOUR, 5, ['v3']));
    expect(await rollups.recordBatch(late)).toBe(true);
    const twoHours = batch(clicks(linkA, day + 10 * HOUR, 3, ['v1']), clicks(linkA, day + 11 * HOUR, 4, ['v5'], { country: 'JP' }));
    expect([...(await rollups.recordBatches([late, twoHours]))]).toEqual([twoHours.batchId]);
    expect(await rollups.recordBatch(late)).toBe(false);
    // A roll afterwards finds nothing of that day to do.
    expect((await rollups.rollCombinationDays(new Date(day + 2 * DAY))).days).not.toContain('2026-02-12');

    await expectDailyExact(linkA, true);
    const { totals } = await totalsAgainstCombinations(linkA, 'daily', 'click_daily_combinations');
    expect(totals).toEqual([{ at: '2026-02-12', clicks: 24, unique: 4 }]);
  });

  it('keeps exact sums when rolls of a day run at once with batches still writing it', async () => {
    const day = Date.UTC(2026, 1, 14);
    const hourOf = (i: number) => day + (i % 24) * HOUR;
    const first = Array.from({ length: 10 }, (_, i) =>
      batch(clicks(linkA, hourOf(i), 6, [`v${i}`]), clicks(linkB, hourOf(i + 5), 3, ['w1'])),
    );
    expect((await Promise.all(first.map((b) => rollups.recordBatch(b)))).every(Boolean)).toBe(true);
    // Three rollers at once, among twenty more batches of the day: whichever commits first, each
    // click is in the daily rows once.
    const more = Array.from({ length: 20 }, (_, i) => batch(clicks(linkA, hourOf(i * 7), 4, [`u${i}`], { country: 'DE' })));
    const rolls = Array.from({ length: 3 }, () => rollups.rollCombinationDays(new Date(day + DAY)));
    const written = await Promise.all(more.map((b) => rollups.recordBatch(b)));
    expect(written.every(Boolean)).toBe(true);
    expect((await Promise.all(rolls)).filter(({ days }) => days.includes('2026-02-14'))).toHaveLength(1);

    for (const linkId of [linkA, linkB]) await expectDailyExact(linkId, true);
    const { totals } = await totalsAgainstCombinations(linkA, 'daily', 'click_daily_combinations');
    expect(totals.map((row) => row.clicks)).toEqual([60 + 80]);
  });

  it('deletes the combination rows and named hosts with their link, however it is deleted', async () => {
    await rollups.recordBatch(batch(clicks(linkA, hour0, 6, ['v1']), clicks(linkB, hour2, 6, ['v2'])));
    const rowsOf = async (linkId: string) => {
      const [row] = await env.sql<{ n: number }[]>`
        SELECT (SELECT count(*) FROM click_hourly_combinations WHERE link_id = ${linkId})
             + (SELECT count(*) FROM click_daily_combinations WHERE link_id = ${linkId})
             + (SELECT count(*) FROM click_hourly_combination_referrers WHERE link_id = ${linkId}) AS n`;
      return Number(row!.n);
    };
    await rollups.rollCombinationDays(new Date(hour2 + DAY));
    expect(await rowsOf(linkA)).toBe(6 + 6 + 3);
    await linksRepository(env.sql).delete(linkA);
    expect(await rowsOf(linkA)).toBe(0);
    await env.sql`DELETE FROM links WHERE id = ${linkB}`;
    expect(await rowsOf(linkB)).toBe(0);
    // A batch for a deleted link writes none.
    await rollups.recordBatch(batch(clicks(linkA, hour0, 6, ['v1'])));
    expect(await rowsOf(linkA)).toBe(0);
  });
});
