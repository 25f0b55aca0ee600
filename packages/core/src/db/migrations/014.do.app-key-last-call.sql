-- The last App SDK call an app's key made (POST /api/app/open or /api/app/install), which the
-- debug page (?d=1) shows. Written at most once a minute per app, so a busy app's calls cost no
-- write each; null until the first call.
ALTER TABLE apps ADD COLUMN key_last_used_at timestamptz;
ALTER TABLE apps ADD COLUMN key_last_call text CHECK (key_last_call IN ('open', 'install'));
