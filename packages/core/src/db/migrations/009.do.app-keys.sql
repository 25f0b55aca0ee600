-- App keys: a publishable key per app, which an app shipped to users sends to resolve the links it
-- was opened with (POST /api/app/open). Stored like API keys: the SHA-256 of the secret, and its
-- first characters for recognition. Apps registered before keys existed have none until their
-- owner creates one (POST /api/apps/:id/key); a key nobody was shown would be of no use.
ALTER TABLE apps ADD COLUMN key_prefix text;
ALTER TABLE apps ADD COLUMN key_hash bytea;
ALTER TABLE apps ADD COLUMN key_created_at timestamptz;
ALTER TABLE apps ADD CONSTRAINT apps_key_complete CHECK ((key_hash IS NULL) = (key_prefix IS NULL) AND (key_hash IS NULL) = (key_created_at IS NULL));
-- Every open call looks its key up by hash.
CREATE UNIQUE INDEX apps_key_hash_key ON apps (key_hash) WHERE key_hash IS NOT NULL;
