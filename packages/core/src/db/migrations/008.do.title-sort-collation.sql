-- GET /links?sortBy=title sorts titles with ICU's root collation ("und-x-icu": case-insensitive,
-- letters before their accents, whatever the database's own locale; a C-locale database sorted
-- "Banana" before "apple"). The title index follows, so a page is still read from the index
-- instead of sorting all of an account's links.
CREATE INDEX links_user_title_icu_idx ON links (user_id, (title COLLATE "und-x-icu"), id);
DROP INDEX links_user_title_idx;
