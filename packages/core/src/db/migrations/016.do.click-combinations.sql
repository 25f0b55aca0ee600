-- Click rollups of combinations: per link and hour (or UTC day), the clicks of each combination of
-- dimension values (platform, device, country, browser, os, referrer host) with a HyperLogLog
-- sketch of their visitors. The per-dimension tables count each dimension on its own; these answer
-- "which browsers do German iPhone visitors use": reports under filters read them. Written by the
-- worker in the transaction that records the batch id, partitioned and kept like the other
-- rollups (hourly rows by UTC month, daily rows by UTC year).
--
-- Referrer hosts have a long tail: per link and hour only the first hosts (see docs/analytics.md,
-- "Filters") keep their name here, the others are counted under 'Other'.
CREATE TABLE click_hourly_combinations (
  link_id  uuid NOT NULL,
  bucket   timestamptz NOT NULL,
  platform text NOT NULL,
  device   text NOT NULL,
  country  text NOT NULL,
  browser  text NOT NULL,
  os       text NOT NULL,
  referrer text NOT NULL,
  clicks   bigint NOT NULL,
  visitors hll NOT NULL,
  PRIMARY KEY (link_id, bucket, platform, device, country, browser, os, referrer)
) PARTITION BY RANGE (bucket);

CREATE TABLE click_daily_combinations (
  link_id  uuid NOT NULL,
  day      date NOT NULL,
  platform text NOT NULL,
  device   text NOT NULL,
  country  text NOT NULL,
  browser  text NOT NULL,
  os       text NOT NULL,
  referrer text NOT NULL,
  clicks   bigint NOT NULL,
  visitors hll NOT NULL,
  PRIMARY KEY (link_id, day, platform, device, country, browser, os, referrer)
) PARTITION BY RANGE (day);

-- The same partitions as the other rollups hold: months and years with rows, and the current ones.
SELECT ensure_rollup_partition('click_hourly_combinations', 'month', m.at)
FROM (SELECT DISTINCT date_trunc('month', bucket AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' FROM click_hourly
      UNION SELECT now() UNION SELECT now() + interval '1 month') AS m(at);
SELECT ensure_rollup_partition('click_daily_combinations', 'year', y.at)
FROM (SELECT DISTINCT date_trunc('year', day)::date::timestamp AT TIME ZONE 'UTC' FROM click_daily UNION SELECT now()) AS y(at);

-- No foreign key onto links (partitioned, like the other rollups): a link's rows go with it, in
-- the transaction that deletes it.
CREATE FUNCTION delete_click_combinations() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM click_hourly_combinations WHERE link_id IN (SELECT id FROM gone);
  DELETE FROM click_daily_combinations WHERE link_id IN (SELECT id FROM gone);
  RETURN NULL;
END $$;

CREATE TRIGGER links_delete_click_combinations AFTER DELETE ON links
REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION delete_click_combinations();
