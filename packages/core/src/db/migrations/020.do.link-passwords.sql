-- A link's password, as an argon2id hash (its salt and parameters inside); null: the link is open.
-- The API writes it, the redirector verifies visitors' answers against it.
ALTER TABLE links ADD COLUMN password_hash text;
