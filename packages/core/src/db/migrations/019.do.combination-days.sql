-- The daily combination rows are no longer written with every batch: the batch statement writes
-- the hourly combination rows, and once a UTC day is over the worker's roll-combination-days task
-- sums that day's hourly rows into click_daily_combinations, once (docs/worker.md, "Combination
-- days"). Writing both doubled the combination writes, the largest part of a batch's cost.
--
-- One row per UTC day that has hourly combination rows, written by the batch statement. `rolled`
-- says the day's daily rows are complete: a day not rolled has no daily combination rows, and a
-- batch that brings clicks of a rolled day (a late batch) writes that day's daily rows itself.
-- Both sides take an advisory lock on the day (shared for batches, exclusive for the roll;
-- COMBINATION_DAY_LOCK in rollups-repository.ts), so a roll sees every batch of its day committed
-- before it, and every later batch sees the day rolled.
CREATE TABLE click_combination_days (
  day    date PRIMARY KEY,
  rolled boolean NOT NULL DEFAULT false
);
CREATE INDEX click_combination_days_pending_idx ON click_combination_days (day) WHERE NOT rolled;

-- The days written so far have their daily rows already. While workers of the previous release
-- still run (an upgrade), they write today's and tomorrow's daily rows with every batch: those
-- days count as rolled too, as the new workers then write their daily rows the same way.
INSERT INTO click_combination_days (day, rolled)
SELECT DISTINCT day, true FROM click_daily_combinations
UNION
SELECT (now() AT TIME ZONE 'UTC')::date + d, true FROM generate_series(0, 1) AS d
WHERE EXISTS (SELECT FROM click_daily_combinations);

-- The roll reads one day of hourly combination rows; their key starts with the link, so without
-- this it would read the day's whole month partition. Rows of an hour are written during that
-- hour and the next few, so a block range index stays small and selective.
CREATE INDEX click_hourly_combinations_bucket_idx ON click_hourly_combinations USING brin (bucket);

-- What the reports read as daily combination rows: the rows of rolled days, and for days not
-- rolled yet (yesterday until the roll, today) their hourly rows summed per day, sketches
-- unioned. Conditions on the link, the columns and the day reach both parts' primary keys; the
-- hourly part starts at the first day not rolled.
CREATE VIEW click_daily_combinations_read AS
SELECT link_id, day, platform, device, country, browser, os, referrer, clicks, visitors
FROM click_daily_combinations
UNION ALL
SELECT link_id, (bucket AT TIME ZONE 'UTC')::date AS day, platform, device, country, browser, os, referrer,
       sum(clicks)::bigint AS clicks, hll_union_agg(visitors) AS visitors
FROM click_hourly_combinations
WHERE bucket >= (SELECT min(day) FROM click_combination_days WHERE NOT rolled)::timestamp AT TIME ZONE 'UTC'
  AND (bucket AT TIME ZONE 'UTC')::date IN (SELECT day FROM click_combination_days WHERE NOT rolled)
GROUP BY link_id, (bucket AT TIME ZONE 'UTC')::date, platform, device, country, browser, os, referrer;
