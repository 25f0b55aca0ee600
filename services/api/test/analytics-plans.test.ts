import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnalyticsFilter, DIMENSION_NAMES } from '@deeplink/core';
import { analyticsRepository, rollupsRepository } from '@deeplink/core/db';
import { recordClicks, rollupClick } from '@deeplink/test-kit/rollups';
import { BROWSER_AGENTS } from '@deeplink/test-kit/user-agents';
import { createApiHarness, type ApiHarness } from './harness.js';

// The analytics queries must reach rollup rows through the primary keys, never by reading the
// tables whole. The planner decides that from statistics, so the tables get a realistic shape
// first (many links, a month of hourly rows each, written as the worker writes them) and are analysed;
// the planner's settings are left as they are.

const LINKS = 30;
const HOURS = 30 * 24;
const START = Date.UTC(2026, 0, 1);
const ROLLUP_TABLES = new Set([
  'click_hourly',
  'click_hourly_dimensions',
  'click_daily',
  'click_daily_dimensions',
  'app_event_hourly',
  'app_event_daily',
  'click_hourly_combinations',
  'click_daily_combinations',
]);
const PRIMARY_KEYS = new Set([...ROLLUP_TABLES].map((table) => `${table}_pkey`));
/** The rollup tables are partitioned by month or year: a partition (click_hourly_p2026_01) and its key's index count as its parent's. */
const parentOf = (name: string | undefined) => name?.replace(/_p\d{4}(_\d{2})?(?=_pkey$|$)/, '');

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Total Cost'?: number;
  Plans?: PlanNode[];
}

let api: ApiHarness;
let linkIds: string[];
let userId: string;
/** Statements the repository sent, with their parameters, captured through postgres.js' debug hook. */
const sent: { query: string; parameters: unknown[] }[] = [];
let traced: postgres.Sql;

beforeAll(async () => {
  api = await createApiHarness();
  const crowd = await api.registerUser('Crowd');
  const owner = await api.registerUser('Owner');
  userId = owner.id;
  linkIds = [];
  for (let i = 0; i < LINKS; i++) {
    // The owner has two links among many, as one account among many would.
    const token = i < 2 ? owner.token : crowd.token;
    const response = await api.request({
      method: 'POST',
      url: '/api/links',
      token,
      payload: { title: `Link ${i}`, defaultUrl: 'https://example.com' },
    });
    linkIds.push(response.json().data.link.id);
  }
  const browsers = Object.keys(BROWSER_AGENTS);
  await recordClicks(
    api.env.sql,
    linkIds.flatMap((id, l) =>
      Array.from({ length: HOURS }, (_, h) =>
        rollupClick(id, START + h * 3_600_000 + l * 1000, {
          browser: browsers[(h + l) % browsers.length]!,
          visitor: `visitor-${l}-${h % 200}`,
          referrer: `site${h % 7}.example`,
        }),
      ),
    ),
  );
  // App events beside the clicks, every hour of every link, committed as the worker commits them.
  for (const linkId of linkIds) {
    const events = Array.from({ length: HOURS }, (_, h) => [
      { linkId, bucket: START + h * 3_600_000, name: 'REDIRECT' as const, platform: 'ANDROID' as const, visitor: `visitor-${h % 200}` },
      {
        linkId,
        bucket: START + h * 3_600_000,
        name: 'APP_FIRST_OPEN' as const,
        platform: 'IOS' as const,
        eventId: `open-${linkId}-${h}`,
        visitor: `install-${h}`,
      },
    ]).flat();
    expect(await rollupsRepository(api.env.sql).recordBatch({ batchId: randomUUID(), receivedClicks: 0, clicks: [], events })).toBe(true);
  }
  // The days are over: their combination rows are rolled into daily ones, as the worker does.
  await rollupsRepository(api.env.sql).rollCombinationDays(new Date(START + HOURS * 3_600_000));
  await api.env.sql`ANALYZE click_hourly, click_hourly_dimensions, click_daily, click_daily_dimensions, app_event_hourly, app_event_daily,
         click_hourly_combinations, click_daily_combinations, links`;
  traced = postgres(api.env.config.DATABASE_URL, {
    max: 1,
    onnotice: () => {},
    debug: (_connection, query, parameters) => void sent.push({ query, parameters }),
  });
}, 120_000);
afterAll(async () => {
  await traced?.end();
  await api?.close();
});

/**
 * The plan of every captured statement that reads a rollup table (`tables`: the click rollups and
 * the app event rollups by default).
 */
async function rollupPlans(run: () => Promise<unknown>, tables = /(click|app_event)_(hourly|daily)/): Promise<PlanNode[]> {
  sent.length = 0;
  await run();
  const statements = sent.filter(({ query }) => tables.test(query));
  expect(statements.length).toBeGreaterThan(0);
  const plans: PlanNode[] = [];
  for (const { query, parameters } of statements) {
    const [row] = await api.env.sql.unsafe(`EXPLAIN (FORMAT JSON) ${query}`, parameters as never[]);
    plans.push((row!['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan);
  }
  return plans;
}

const nodes = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(nodes)];

/** Every access to a rollup table goes through its primary key; returns the access node types. */
function expectPrimaryKeyAccess(plans: PlanNode[]): string[] {
  const all = plans.flatMap(nodes);
  const accesses = all.filter(
    (node) => ROLLUP_TABLES.has(parentOf(node['Relation Name']) ?? '') || PRIMARY_KEYS.has(parentOf(node['Index Name']) ?? ''),
  );
  expect(accesses.length).toBeGreaterThan(0);
  for (const node of accesses) {
    // The daily combination rows of days not rolled yet are summed from hourly ones from the first
    // such day on, a bound known only as the statement runs: the planner may then pick a
    // sequential scan of a partition it knows to be empty (a month ahead), which reads nothing.
    if (node['Node Type'] === 'Seq Scan' && node['Total Cost'] === 0) continue;
    expect(node['Node Type'], JSON.stringify(node)).not.toBe('Seq Scan');
    if (node['Node Type'] !== 'Bitmap Heap Scan')
      expect(PRIMARY_KEYS.has(parentOf(node['Index Name']) ?? ''), JSON.stringify(node)).toBe(true);
  }
  // A bitmap heap scan is fed by a bitmap index scan, which must be on a primary key too.
  for (const node of all.filter((n) => n['Node Type'] === 'Bitmap Index Scan'))
    expect(PRIMARY_KEYS.has(parentOf(node['Index Name'])!)).toBe(true);
  return accesses.map((node) => `${node['Node Type']} ${parentOf(node['Relation Name'] ?? node['Index Name'])}`);
}

describe('analytics query plans', () => {
  /** `days` days from the fourth of the month; `edgeHours` moves both ends into the middle of a day. */
  const range = (days: number, timeBucket: 'hour' | 'day' | 'week' | 'month', edgeHours = 0) => ({
    start: new Date(START + 3 * 86_400_000 + edgeHours * 3_600_000),
    end: new Date(START + (3 + days) * 86_400_000 + edgeHours * 3_600_000),
    timeBucket,
  });

  it('reads a link report through the primary keys, whole days from the daily tables', async () => {
    const repository = analyticsRepository(traced);
    for (const edgeHours of [0, 7]) {
      for (const [days, bucket] of [
        [7, 'hour'],
        [20, 'day'],
        [27, 'week'],
        [27, 'month'],
      ] as const) {
        const plans = await rollupPlans(() =>
          repository.linkReport(linkIds[0]!, range(days, bucket, edgeHours), ['platform', 'country', 'browser', 'device', 'referrer']),
        );
        const accesses = expectPrimaryKeyAccess(plans);
        // Partitions are pruned: the ranges lie in January 2026, so no other month's hourly partition is read.
        const hourlyPartitions = plans
          .flatMap(nodes)
          .map((node) => node['Index Name'] ?? node['Relation Name'] ?? '')
          .filter((name) => /^click_hourly.*_p\d/.test(name));
        expect(
          hourlyPartitions.filter((name) => !name.includes('_p2026_01')),
          bucket,
        ).toEqual([]);
        expect(accesses.join('\n'), bucket).toMatch(/click_daily_dimensions/);
        expect(accesses.join('\n'), bucket).toMatch(/click_daily\b/);
        // The app events too: of the range, its whole days from the daily rows.
        expect(accesses.join('\n'), bucket).toMatch(/app_event_daily/);
      }
    }
  });

  it('reads an export through the primary keys', async () => {
    const repository = analyticsRepository(traced);
    for (const [bucket, edgeHours] of [
      ['day', 0],
      ['week', 7],
      ['hour', 7],
    ] as const) {
      expectPrimaryKeyAccess(
        await rollupPlans(async () => {
          const exportRange = range(bucket === 'hour' ? 3 : 20, bucket, edgeHours);
          for await (const _rows of repository.exportRows(linkIds[0]!, exportRange)) {
            /* drain */
          }
          for await (const _rows of repository.wideRows(linkIds[0]!, exportRange)) {
            /* drain */
          }
        }),
      );
    }
  });

  it("reads the summary's click totals and breakdowns through the primary keys, all time and over a range", async () => {
    const repository = analyticsRepository(traced);
    // The click rollups only: the summary's app events read the daily rows of all the account's
    // links (of all time, or of the range), which in this small database (1,800 daily event rows)
    // the planner may rightly read whole rather than through the key.
    const clicks = /click_(hourly|daily)/;
    expectPrimaryKeyAccess(await rollupPlans(() => repository.accountSummary(userId), clicks));
    const allTime = expectPrimaryKeyAccess(await rollupPlans(() => repository.accountSummary(userId, {}, DIMENSION_NAMES), clicks));
    // All time, the totals and the breakdowns come from the daily rows alone.
    expect(allTime.filter((access) => access.includes('hourly'))).toEqual([]);
    expect(allTime.some((access) => access.includes('click_daily_dimensions'))).toBe(true);
    expectPrimaryKeyAccess(
      await rollupPlans(() => repository.accountSummary(userId, { range: range(20, 'day', 7) }, DIMENSION_NAMES), clicks),
    );
    const { dimensions, totalClicks } = await analyticsRepository(api.env.sql).accountSummary(userId, {}, ['os']);
    expect(totalClicks).toBe(2 * HOURS);
    expect(dimensions).toEqual([{ dimension: 'os', value: 'Windows', clicks: 2 * HOURS }]);
  });

  it("reads filtered reports, exports and summaries through the combination tables' primary keys", async () => {
    const repository = analyticsRepository(traced);
    const filter: AnalyticsFilter = [
      { dimension: 'browser', negated: false, values: ['Chrome', 'Firefox'] },
      { dimension: 'referrer', negated: true, values: ['site1.example'] },
    ];
    const combinations = (accesses: string[]) => accesses.filter((access) => access.includes('_combinations'));
    for (const [days, bucket, edgeHours] of [
      [7, 'hour', 7],
      [20, 'day', 7],
      [27, 'week', 0],
    ] as const) {
      const accesses = expectPrimaryKeyAccess(
        await rollupPlans(() => repository.linkReport(linkIds[0]!, range(days, bucket, edgeHours), DIMENSION_NAMES, filter)),
      );
      // Every click number from the combination rows, none from the unfiltered rollups; read once, as
      // the series needs them: hourly rows for hours, whole days from the daily rows otherwise.
      expect(
        accesses.filter((access) => /click_(hourly|daily)(_dimensions)?$/.test(access)),
        bucket,
      ).toEqual([]);
      const daily = combinations(accesses).filter((access) => access.includes('click_daily_combinations'));
      if (bucket === 'hour') expect(daily).toEqual([]);
      else expect(daily.length, bucket).toBeGreaterThan(0);
      expectPrimaryKeyAccess(
        await rollupPlans(async () => {
          for await (const _rows of repository.exportRows(linkIds[0]!, range(days, bucket, edgeHours), filter)) {
            /* drain */
          }
          for await (const _rows of repository.wideRows(linkIds[0]!, range(days, bucket, edgeHours), filter)) {
            /* drain */
          }
        }),
      );
    }
    // The summary over a range. All time it reads the daily combination rows of all the account's
    // links, which in this small database (900 such rows in all) the planner may rightly read whole.
    const accesses = expectPrimaryKeyAccess(
      await rollupPlans(
        () => repository.accountSummary(userId, { range: range(20, 'day', 7), clicks: filter }, DIMENSION_NAMES),
        /click_(hourly|daily)/,
      ),
    );
    expect(combinations(accesses)).toEqual(accesses);
  });

  it('reads only the requested rows: the report matches the clicks recorded', async () => {
    const repository = analyticsRepository(api.env.sql);
    const report = await repository.linkReport(linkIds[1]!, range(7, 'hour'), ['referrer']);
    expect(report.totalClicks).toBe(7 * 24);
    expect(report.series.size).toBe(7 * 24);
    expect(report.dimensions.filter((row) => row.dimension === 'referrer').reduce((n, row) => n + row.clicks, 0)).toBe(7 * 24);
    // Two events an hour: a REDIRECT and a first open in each hour's bucket.
    expect(report.appEventSeries.starts).toHaveLength(7 * 24);
    expect(Math.min(...report.appEventSeries.starts)).toBe(START + 3 * 86_400_000);
    expect(new Set(report.appEventSeries.REDIRECT)).toEqual(new Set([1]));
    expect(new Set(report.appEventSeries.APP_FIRST_OPEN)).toEqual(new Set([1]));
    expect(new Set(report.appEventSeries.APP_RE_OPEN)).toEqual(new Set([0]));
    // Each hour's one event is one visitor; over the range, 168 distinct ones are past the sketches' exact
    // range (160), so their merged count is an estimate within about 2 %.
    expect(new Set(report.appEventSeries.uniques.REDIRECT)).toEqual(new Set([1]));
    expect(report.appEvents.sort((a, b) => a.event.localeCompare(b.event))).toEqual([
      { event: 'APP_FIRST_OPEN', platform: 'IOS', count: 7 * 24, uniques: expect.any(Number) },
      { event: 'REDIRECT', platform: 'ANDROID', count: 7 * 24, uniques: expect.any(Number) },
    ]);
    for (const { uniques } of report.appEvents) expect(Math.abs(uniques - 7 * 24)).toBeLessThanOrEqual(0.02 * 7 * 24);
  });
});
