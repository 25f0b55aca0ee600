-- Login tokens carry the user's token version (`ver`); a password change or "log out everywhere"
-- increments it, and every token signed with an earlier version is refused from then on.
ALTER TABLE users ADD COLUMN token_version integer NOT NULL DEFAULT 0;
