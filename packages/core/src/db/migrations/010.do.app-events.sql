-- App event rollups: per link, hour (or UTC day), event (REDIRECT, APP_INSTALL, APP_FIRST_OPEN,
-- APP_RE_OPEN) and platform (ANDROID, IOS, DESKTOP, OTHER), counted like clicks: written by the
-- worker in the transaction that records the batch id, partitioned like the click rollups (hourly
-- rows by UTC month, daily rows by UTC year; ensure_rollup_partition creates them) and kept as
-- long as they are. `visitors` is the HLL sketch of who the events were, as click_hourly's is of
-- its visitors: a REDIRECT's click visitor, an install's (app, installId) hash, an open's install
-- or, when it names none, the open itself (docs/analytics.md, "Unique app events").
CREATE TABLE app_event_hourly (
  link_id  uuid NOT NULL,
  bucket   timestamptz NOT NULL,
  event    text NOT NULL,
  platform text NOT NULL,
  count    bigint NOT NULL,
  visitors hll NOT NULL,
  PRIMARY KEY (link_id, bucket, event, platform)
) PARTITION BY RANGE (bucket);

CREATE TABLE app_event_daily (
  link_id  uuid NOT NULL,
  day      date NOT NULL,
  event    text NOT NULL,
  platform text NOT NULL,
  count    bigint NOT NULL,
  visitors hll NOT NULL,
  PRIMARY KEY (link_id, day, event, platform)
) PARTITION BY RANGE (day);

SELECT ensure_rollup_partition('app_event_hourly', 'month', now());
SELECT ensure_rollup_partition('app_event_hourly', 'month', now() + interval '1 month');
SELECT ensure_rollup_partition('app_event_daily', 'year', now());

-- The ids of app events that came without a click (an app's opens, sent through the API): each
-- batch of them has an id of its own, so a retried open is told apart by its event id. Pruned
-- with processed_batches.
CREATE TABLE processed_app_events (
  event_id     text PRIMARY KEY,
  processed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX processed_app_events_processed_at ON processed_app_events (processed_at);

-- The rollups have no foreign key onto links (partitioned, like the click rollups): a link's
-- event rows go with it, in the transaction that deletes it.
CREATE FUNCTION delete_app_event_rollups() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM app_event_hourly WHERE link_id IN (SELECT id FROM gone);
  DELETE FROM app_event_daily WHERE link_id IN (SELECT id FROM gone);
  RETURN NULL;
END $$;

CREATE TRIGGER links_delete_app_event_rollups AFTER DELETE ON links
REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION delete_app_event_rollups();
