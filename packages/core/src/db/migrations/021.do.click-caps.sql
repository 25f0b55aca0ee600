-- Click caps: after click_cap clicks a link sends visitors to cap_overflow_url (or answers 410).
-- The count itself lives in Redis (clickcount:<link id>), written by the redirector.
ALTER TABLE links ADD COLUMN click_cap integer CHECK (click_cap > 0), ADD COLUMN cap_overflow_url text;
