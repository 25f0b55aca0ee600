-- Tags on links, for grouping them by campaign; API keys remember a recognisable prefix and when
-- they were last used, so a key list can say which key is which and which are idle.

-- At most 10 lower-case tags per link (checked by the API); an empty array when none.
ALTER TABLE links ADD COLUMN tags text[] NOT NULL DEFAULT '{}';
-- `tags @> ARRAY[…]` (every tag asked for) is answered from this index.
CREATE INDEX links_tags_idx ON links USING gin (tags);

-- The first characters of the key (`dlk_` and 8 more), shown in key lists. Keys made before this
-- column existed were never stored, so their prefix is only `dlk_`.
ALTER TABLE api_keys ADD COLUMN prefix text NOT NULL DEFAULT 'dlk_';
-- Moved at most once a minute per key, not on every request.
ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;
