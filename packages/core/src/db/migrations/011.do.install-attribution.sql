-- Install attribution: one row per visit the redirector sent to an app store with an install
-- token (in the Play referrer on Android, on the iOS page's pasteboard copy). The app's first
-- launch hands the token back (POST /api/app/install) and claims the row: once, for one install.
-- The token is stored as its SHA-256 only. The fingerprint columns serve the optional
-- probabilistic match (off by default, on per app); none of them is the client address: `network`
-- is an HMAC of its /24 or /64 prefix. Rows go with their link (a trigger, not a foreign key: the
-- worker already locks every link it writes for, and a foreign key would check it again for every
-- row, a third of a row's cost), and once past expires_at the worker's maintenance deletes them.
CREATE TABLE install_clicks (
  token_hash     bytea PRIMARY KEY,
  link_id        uuid NOT NULL,
  platform       text NOT NULL CHECK (platform IN ('ANDROID', 'IOS')),
  clicked_at     timestamptz NOT NULL,
  expires_at     timestamptz NOT NULL,
  network        text,
  os_version     text,
  device_family  text,
  language       text,
  -- SHA-256 of the claiming app's id and its install id: the same install asking again gets the
  -- same answer, any other gets nothing.
  claimed_by     bytea,
  claimed_at     timestamptz,
  CHECK ((claimed_by IS NULL) = (claimed_at IS NULL))
);
CREATE INDEX install_clicks_link_id ON install_clicks (link_id);
CREATE INDEX install_clicks_expires_at ON install_clicks (expires_at);
-- The probabilistic match looks for unclaimed visits from one network within a window.
CREATE INDEX install_clicks_unclaimed_network ON install_clicks (network, clicked_at) WHERE claimed_by IS NULL;
-- An install that was matched once (by any means) finds its answer again here.
CREATE INDEX install_clicks_claimed_by ON install_clicks (claimed_by) WHERE claimed_by IS NOT NULL;

CREATE FUNCTION delete_install_clicks() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM install_clicks WHERE link_id IN (SELECT id FROM gone);
  RETURN NULL;
END $$;

CREATE TRIGGER links_delete_install_clicks AFTER DELETE ON links
REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION delete_install_clicks();

-- The probabilistic match, per app: off until its owner turns it on.
ALTER TABLE apps ADD COLUMN fingerprint_matching boolean NOT NULL DEFAULT false;
ALTER TABLE apps ADD COLUMN fingerprint_window_minutes integer NOT NULL DEFAULT 120
  CHECK (fingerprint_window_minutes BETWEEN 5 AND 1440);
