-- Daily rollups next to the hourly ones, and no foreign keys from rollups to links.
--
-- The foreign keys checked every new rollup row against links, one lookup per row, which was about
-- half the cost of writing the dimension rows. The worker now locks the links of a transaction
-- once (FOR KEY SHARE, as the foreign key did per row) and skips links that no longer exist, and
-- deleting a link deletes its rollup rows in the same transaction (links-repository.ts), so
-- nothing is lost by dropping them.
ALTER TABLE click_hourly DROP CONSTRAINT click_hourly_link_id_fkey;
ALTER TABLE click_hourly_dimensions DROP CONSTRAINT click_hourly_dimensions_link_id_fkey;

-- The rows of the current hour and day are updated by every transaction. Room left on each page
-- lets PostgreSQL write the new version next to the old one (a HOT update) instead of adding an
-- index entry per update; rows of past hours and days are never updated again.
ALTER TABLE click_hourly SET (fillfactor = 80);
ALTER TABLE click_hourly_dimensions SET (fillfactor = 80);

-- Daily totals per link (UTC days), with the union of that day's hourly visitor sketches, so a
-- long range merges one sketch per day instead of one per hour.
CREATE TABLE click_daily (
  link_id   uuid NOT NULL,
  day       date NOT NULL,
  clicks    bigint NOT NULL,
  visitors  hll NOT NULL,
  PRIMARY KEY (link_id, day)
) WITH (fillfactor = 80);

-- Daily counts per link and dimension value: whole days of a report's breakdowns are read here,
-- one row per value and day instead of 24.
CREATE TABLE click_daily_dimensions (
  link_id   uuid NOT NULL,
  dimension text NOT NULL,
  day       date NOT NULL,
  value     text NOT NULL,
  clicks    bigint NOT NULL,
  PRIMARY KEY (link_id, dimension, day, value)
) WITH (fillfactor = 80);

-- The days rolled up so far. Workers of the previous version write hourly rows only: stop them
-- before this runs (the worker's own start applies it).
INSERT INTO click_daily (link_id, day, clicks, visitors)
SELECT link_id, (bucket AT TIME ZONE 'UTC')::date, sum(clicks), hll_union_agg(visitors)
FROM click_hourly
GROUP BY 1, 2;

INSERT INTO click_daily_dimensions (link_id, dimension, day, value, clicks)
SELECT link_id, dimension, (bucket AT TIME ZONE 'UTC')::date, value, sum(clicks)
FROM click_hourly_dimensions
GROUP BY 1, 2, 3, 4;
