-- Active custom domains are checked again on a schedule: a domain whose TXT record stays missing
-- past a grace period stops being active, so the hostname can be proven by another account.

-- When the worker (or a verify call) last got an answer from DNS for the domain's TXT record.
ALTER TABLE domains ADD COLUMN last_checked_at timestamptz;
-- Since when the record has been found without the token; NULL while it holds it. Kept once the
-- domain was unverified for it, so its owner can see why; cleared when it is verified again.
ALTER TABLE domains ADD COLUMN verification_lost_at timestamptz;
