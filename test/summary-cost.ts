// What the account summary's breakdowns cost: all time they are read from click_daily_dimensions,
// one row per link, day and value. Prints median milliseconds per summary; asserts nothing.
// Run: npx tsx test/summary-cost.ts
import { DIMENSION_NAMES } from '@deeplink/core';
import { analyticsRepository, rollupPartitions } from '@deeplink/core/db';
import { createTestEnvironment } from '@deeplink/test-kit/environment';
import setup from '@deeplink/test-kit/global-setup';

const LINKS = 100;
/** Values a day per dimension, as a busy link has them. */
const VALUES: Record<string, number> = { platform: 3, country: 10, browser: 5, os: 5, device: 2, referrer: 5 };

await setup();
const env = await createTestEnvironment();
const { sql } = env;
try {
  await rollupPartitions(sql).ensure(Array.from({ length: 12 }, (_, month) => new Date(Date.UTC(2025, month, 1))));
  const [user] = await sql<
    { id: string }[]
  >`INSERT INTO users (name, email, password_hash) VALUES ('Cost', 'cost@example.com', 'x') RETURNING id`;
  await sql`
    INSERT INTO links (user_id, code, title, default_url)
    SELECT ${user!.id}, 'sc' || n, 'Link ' || n, 'https://example.com' FROM generate_series(1, ${LINKS}) n`;
  // Every day of 2025 clicked on every link, with VALUES values per dimension.
  await sql`
    INSERT INTO click_daily (link_id, day, clicks, visitors)
    SELECT l.id, d::date, 100, hll_empty() FROM links l, generate_series(date '2025-01-01', date '2025-12-31', interval '1 day') d`;
  await sql`
    INSERT INTO click_daily_dimensions (link_id, dimension, day, value, clicks)
    SELECT c.link_id, v.dimension, c.day, 'v' || i, 3
    FROM click_daily c, (SELECT key AS dimension, value::int AS n FROM json_each_text(${VALUES as never}::json)) v, generate_series(1, v.n) i`;
  await sql`ANALYZE`;
  const [{ rows }] = (await sql`SELECT count(*)::int AS rows FROM click_daily_dimensions`) as unknown as [{ rows: number }];

  const repository = analyticsRepository(sql);
  const median = async (run: () => Promise<unknown>) => {
    const times: number[] = [];
    for (let i = 0; i < 9; i++) {
      const started = performance.now();
      await run();
      times.push(performance.now() - started);
    }
    return Math.round(times.sort((a, b) => a - b)[4]!);
  };
  const march = { start: new Date('2025-03-01T00:00:00Z'), end: new Date('2025-04-01T00:00:00Z') };
  console.log(
    JSON.stringify({
      summary: `${LINKS} links, a year, ${rows} daily dimension rows; median ms`,
      'all time, no breakdowns': await median(() => repository.accountSummary(user!.id)),
      'all time, breakdowns': await median(() => repository.accountSummary(user!.id, {}, DIMENSION_NAMES)),
      'one month, breakdowns': await median(() => repository.accountSummary(user!.id, { range: march }, DIMENSION_NAMES)),
    }),
  );
} finally {
  await env.close();
}
