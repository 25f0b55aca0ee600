-- Accounts, API keys, links, and the hourly click rollups the analytics read.
CREATE EXTENSION IF NOT EXISTS hll;

CREATE TABLE users (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name          text NOT NULL,
  email         text NOT NULL,
  password_hash text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now()
);
-- Emails are stored lower-cased by the API; the index makes uniqueness hold regardless.
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE api_keys (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name        text NOT NULL,
  -- SHA-256 of the key; the key itself is shown once and never stored.
  key_hash    bytea NOT NULL UNIQUE,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_keys_user_id_idx ON api_keys (user_id);

CREATE TABLE links (
  id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id           uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  code              text NOT NULL UNIQUE,
  title             text NOT NULL,
  default_url       text NOT NULL,
  android_link      jsonb,
  ios_link          jsonb,
  desktop_url       text,
  custom_parameters jsonb,
  expires_at        timestamptz,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now()
);
-- One index per sortable column, each led by the owner, so a page of a user's links is an index scan.
CREATE INDEX links_user_created_idx ON links (user_id, created_at, id);
CREATE INDEX links_user_updated_idx ON links (user_id, updated_at, id);
CREATE INDEX links_user_title_idx ON links (user_id, title, id);
CREATE INDEX links_user_default_url_idx ON links (user_id, default_url, id);

-- Hourly totals per link (UTC buckets), with a HyperLogLog sketch of visitor hashes so
-- unique clicks can be merged over any range.
CREATE TABLE click_hourly (
  link_id   uuid NOT NULL REFERENCES links (id) ON DELETE CASCADE,
  bucket    timestamptz NOT NULL,
  clicks    bigint NOT NULL,
  visitors  hll NOT NULL,
  PRIMARY KEY (link_id, bucket)
);

-- Hourly counts per link and dimension value (platform, country, browser, os, device, referrer).
CREATE TABLE click_hourly_dimensions (
  link_id   uuid NOT NULL REFERENCES links (id) ON DELETE CASCADE,
  bucket    timestamptz NOT NULL,
  dimension text NOT NULL,
  value     text NOT NULL,
  clicks    bigint NOT NULL,
  PRIMARY KEY (link_id, dimension, bucket, value)
);

-- Click batches already rolled up: a batch delivered again is skipped, never counted twice.
CREATE TABLE processed_batches (
  batch_id     text PRIMARY KEY,
  clicks       integer NOT NULL,
  processed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX processed_batches_processed_at_idx ON processed_batches (processed_at);
