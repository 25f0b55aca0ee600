-- The referrer hosts that keep their name in the combination rollups of a link's hour. Referrer
-- hosts have a long tail, and every distinct host multiplies a link-hour's combination rows; so
-- per link and UTC hour only the first COMBINATION_REFERRERS_PER_HOUR hosts (packages/core,
-- src/analytics/combinations.ts) are named in click_hourly_combinations and
-- click_daily_combinations, and the clicks of later hosts are counted under 'Other' there
-- (docs/analytics.md, "Filters"). The per-dimension tables keep every host.
--
-- The worker reads a link-hour's rows here (at most about that many, on this key) to decide, in
-- the statement that writes the batch, which of its hosts keep their name; reading the
-- combination rows themselves would scan every combination of a busy hour. 'direct' (no
-- referrer) always keeps its name and has no row. Partitioned by UTC month and kept like the
-- hourly rollups; deleted with their link.
CREATE TABLE click_hourly_combination_referrers (
  link_id  uuid NOT NULL,
  bucket   timestamptz NOT NULL,
  referrer text NOT NULL,
  PRIMARY KEY (link_id, bucket, referrer)
) PARTITION BY RANGE (bucket);

-- The same months as the hourly combination rows.
SELECT ensure_rollup_partition('click_hourly_combination_referrers', 'month', m.at)
FROM (SELECT DISTINCT date_trunc('month', bucket AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' FROM click_hourly_combinations
      UNION SELECT now() UNION SELECT now() + interval '1 month') AS m(at);

CREATE FUNCTION delete_combination_referrers() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM click_hourly_combination_referrers WHERE link_id IN (SELECT id FROM gone);
  RETURN NULL;
END $$;

CREATE TRIGGER links_delete_combination_referrers AFTER DELETE ON links
REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION delete_combination_referrers();
