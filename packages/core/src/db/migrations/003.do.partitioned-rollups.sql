-- The rollup tables partitioned by time, so that old rollups leave by dropping whole partitions
-- (HOURLY_RETENTION_MONTHS, DAILY_RETENTION_MONTHS) instead of deleting rows one by one: hourly
-- tables by UTC month, daily tables by UTC year. Every primary key already starts with the link
-- and holds the time column, so each partition keeps the same key and the queries do not change;
-- a range condition on the time column prunes the partitions a report does not touch.
--
-- The existing rows are moved in this migration (one transaction): stop the workers of the
-- previous version before it runs, as for 002.

-- Creates the partition of `parent` that holds `at` (its UTC month or year) unless it exists, and
-- returns its name: click_hourly_p2026_03, click_daily_p2026. Partitions are created ahead by the
-- worker's maintenance task, and on demand by the worker when a batch reaches a period that has
-- none yet (a late click, a clock far off); the advisory lock lets workers race for it.
CREATE FUNCTION ensure_rollup_partition(parent text, period text, at timestamptz) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  first timestamp := date_trunc(period, at AT TIME ZONE 'UTC');
  name text := parent || '_p' || to_char(first, CASE period WHEN 'month' THEN 'YYYY_MM' WHEN 'year' THEN 'YYYY' END);
BEGIN
  IF period NOT IN ('month', 'year') THEN
    RAISE EXCEPTION 'ensure_rollup_partition: period must be month or year, not %', period;
  END IF;
  IF to_regclass(name) IS NOT NULL THEN
    RETURN name;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtext('rollup partition ' || name));
  IF to_regclass(name) IS NULL THEN
    -- Bounds are written as UTC instants; a date column takes their date.
    EXECUTE format(
      'CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L) WITH (fillfactor = 80)',
      name, parent,
      to_char(first, 'YYYY-MM-DD') || ' 00:00:00+00',
      to_char(first + ('1 ' || period)::interval, 'YYYY-MM-DD') || ' 00:00:00+00');
  END IF;
  RETURN name;
END $$;

ALTER TABLE click_hourly RENAME TO click_hourly_unpartitioned;
ALTER TABLE click_hourly_dimensions RENAME TO click_hourly_dimensions_unpartitioned;
ALTER TABLE click_daily RENAME TO click_daily_unpartitioned;
ALTER TABLE click_daily_dimensions RENAME TO click_daily_dimensions_unpartitioned;
-- The primary keys' index names are what the query plan tests and ops read; free them.
ALTER INDEX click_hourly_pkey RENAME TO click_hourly_unpartitioned_pkey;
ALTER INDEX click_hourly_dimensions_pkey RENAME TO click_hourly_dimensions_unpartitioned_pkey;
ALTER INDEX click_daily_pkey RENAME TO click_daily_unpartitioned_pkey;
ALTER INDEX click_daily_dimensions_pkey RENAME TO click_daily_dimensions_unpartitioned_pkey;

-- Hourly totals per link (UTC buckets), with a HyperLogLog sketch of visitor hashes so
-- unique clicks can be merged over any range. One partition per UTC month.
CREATE TABLE click_hourly (
  link_id   uuid NOT NULL,
  bucket    timestamptz NOT NULL,
  clicks    bigint NOT NULL,
  visitors  hll NOT NULL,
  PRIMARY KEY (link_id, bucket)
) PARTITION BY RANGE (bucket);

-- Hourly counts per link and dimension value (platform, country, browser, os, device, referrer).
CREATE TABLE click_hourly_dimensions (
  link_id   uuid NOT NULL,
  bucket    timestamptz NOT NULL,
  dimension text NOT NULL,
  value     text NOT NULL,
  clicks    bigint NOT NULL,
  PRIMARY KEY (link_id, dimension, bucket, value)
) PARTITION BY RANGE (bucket);

-- Daily totals per link (UTC days) with the union of the day's hourly sketches. One partition per UTC year.
CREATE TABLE click_daily (
  link_id   uuid NOT NULL,
  day       date NOT NULL,
  clicks    bigint NOT NULL,
  visitors  hll NOT NULL,
  PRIMARY KEY (link_id, day)
) PARTITION BY RANGE (day);

-- Daily counts per link and dimension value. One partition per UTC year.
CREATE TABLE click_daily_dimensions (
  link_id   uuid NOT NULL,
  dimension text NOT NULL,
  day       date NOT NULL,
  value     text NOT NULL,
  clicks    bigint NOT NULL,
  PRIMARY KEY (link_id, dimension, day, value)
) PARTITION BY RANGE (day);

-- A partition for every period that holds rows, and for the current one.
SELECT ensure_rollup_partition(t.parent, 'month', m.at)
FROM (VALUES ('click_hourly'), ('click_hourly_dimensions')) AS t(parent),
     (SELECT date_trunc('month', bucket AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' FROM click_hourly_unpartitioned
      UNION SELECT date_trunc('month', bucket AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' FROM click_hourly_dimensions_unpartitioned
      UNION SELECT now()) AS m(at);
SELECT ensure_rollup_partition(t.parent, 'year', y.at)
FROM (VALUES ('click_daily'), ('click_daily_dimensions')) AS t(parent),
     (SELECT date_trunc('year', day)::date::timestamp AT TIME ZONE 'UTC' FROM click_daily_unpartitioned
      UNION SELECT date_trunc('year', day)::date::timestamp AT TIME ZONE 'UTC' FROM click_daily_dimensions_unpartitioned
      UNION SELECT now()) AS y(at);

INSERT INTO click_hourly SELECT link_id, bucket, clicks, visitors FROM click_hourly_unpartitioned;
INSERT INTO click_hourly_dimensions SELECT link_id, bucket, dimension, value, clicks FROM click_hourly_dimensions_unpartitioned;
INSERT INTO click_daily SELECT link_id, day, clicks, visitors FROM click_daily_unpartitioned;
INSERT INTO click_daily_dimensions SELECT link_id, dimension, day, value, clicks FROM click_daily_dimensions_unpartitioned;

DROP TABLE click_hourly_unpartitioned, click_hourly_dimensions_unpartitioned, click_daily_unpartitioned, click_daily_dimensions_unpartitioned;
