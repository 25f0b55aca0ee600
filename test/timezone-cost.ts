// What a report in a time zone other than UTC costs: its day, week and month buckets are read from
// hourly rows (daily rows are UTC days). Prints median milliseconds per report; asserts nothing.
// Run: npx tsx test/timezone-cost.ts
import { DIMENSION_NAMES } from '@deeplink/core';
import { analyticsRepository, rollupPartitions } from '@deeplink/core/db';
import { createTestEnvironment } from '@deeplink/test-kit/environment';
import setup from '@deeplink/test-kit/global-setup';

await setup();
const env = await createTestEnvironment();
const { sql } = env;
try {
  await rollupPartitions(sql).ensure(Array.from({ length: 12 }, (_, month) => new Date(Date.UTC(2025, month, 1))));
  const [user] = await sql<
    { id: string }[]
  >`INSERT INTO users (name, email, password_hash) VALUES ('Cost', 'cost@example.com', 'x') RETURNING id`;
  const [link] = await sql<{ id: string }[]>`
    INSERT INTO links (user_id, code, title, default_url) VALUES (${user!.id}, 'tzcost', 'Cost', 'https://example.com') RETURNING id`;
  const linkId = link!.id;
  // Every hour of 2025 clicked, by a handful of visitors, with a value per dimension.
  await sql`
    INSERT INTO click_hourly (link_id, bucket, clicks, visitors)
    SELECT ${linkId}, h, 5, (SELECT hll_add_agg(hll_hash_text(v::text || h)) FROM generate_series(1, 3) v)
    FROM generate_series(timestamptz '2025-01-01', timestamptz '2025-12-31 23:00', interval '1 hour') h`;
  await sql`
    INSERT INTO click_hourly_dimensions (link_id, bucket, dimension, value, clicks)
    SELECT link_id, bucket, d, 'v' || (extract(hour FROM bucket)::int % 8), 5 FROM click_hourly, unnest(${DIMENSION_NAMES as unknown as string[]}::text[]) d`;
  await sql`
    INSERT INTO click_daily (link_id, day, clicks, visitors)
    SELECT link_id, (bucket AT TIME ZONE 'UTC')::date, sum(clicks), hll_union_agg(visitors) FROM click_hourly GROUP BY 1, 2`;
  await sql`
    INSERT INTO click_daily_dimensions (link_id, dimension, day, value, clicks)
    SELECT link_id, dimension, (bucket AT TIME ZONE 'UTC')::date, value, sum(clicks) FROM click_hourly_dimensions GROUP BY 1, 2, 3, 4`;
  await sql`ANALYZE`;

  const repository = analyticsRepository(sql);
  const range = (timezone: string, timeBucket: 'day' | 'week' | 'month') => ({
    start: new Date(timezone === 'UTC' ? '2025-01-01T00:00:00Z' : '2024-12-31T23:00:00Z'),
    end: new Date(timezone === 'UTC' ? '2026-01-01T00:00:00Z' : '2025-12-31T23:00:00Z'),
    timeBucket,
    timezone,
  });
  const figures: Record<string, number> = {};
  for (const timeBucket of ['day', 'week', 'month'] as const) {
    for (const timezone of ['UTC', 'Europe/Paris']) {
      const times: number[] = [];
      for (let i = 0; i < 15; i++) {
        const started = performance.now();
        await repository.linkReport(linkId, range(timezone, timeBucket), ['platform', 'country', 'browser', 'device', 'referrer']);
        times.push(performance.now() - started);
      }
      figures[`${timeBucket} ${timezone}`] = Math.round(times.sort((a, b) => a - b)[7]! * 10) / 10;
    }
  }
  console.log(JSON.stringify({ report: 'one link, a year, every hour clicked; median ms', ...figures }));
} finally {
  await env.close();
}
