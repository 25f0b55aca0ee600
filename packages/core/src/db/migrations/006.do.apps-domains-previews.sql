-- Links as apps and social networks expect them: where an expired link goes, its preview card,
-- the apps an account registers (association files, App Store fallback), custom short-link
-- domains, and the link-preview crawler visits counted apart from clicks.

-- Where the link sends visitors once it has expired (a 302 instead of the 410 page).
ALTER TABLE links ADD COLUMN expired_url text;
-- { title, description, imageUrl }: what link-preview crawlers are shown.
ALTER TABLE links ADD COLUMN social_preview jsonb;

-- An account's apps. iOS: team_id and bundle_id (app_store_id optional); Android: package_name and
-- its signing certificates' SHA-256 fingerprints.
CREATE TABLE apps (
  id                       uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id                  uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  platform                 text NOT NULL CHECK (platform IN ('ios', 'android')),
  name                     text,
  team_id                  text,
  bundle_id                text,
  app_store_id             text,
  package_name             text,
  sha256_cert_fingerprints text[],
  created_at               timestamptz NOT NULL DEFAULT now(),
  CHECK (platform <> 'ios' OR (team_id IS NOT NULL AND bundle_id IS NOT NULL)),
  CHECK (platform <> 'android' OR (package_name IS NOT NULL AND sha256_cert_fingerprints IS NOT NULL))
);
CREATE INDEX apps_user_idx ON apps (user_id, created_at, id);
-- One registration per app and account: the link cache reads an iOS app by (owner, bundle id).
CREATE UNIQUE INDEX apps_user_bundle_key ON apps (user_id, bundle_id) WHERE platform = 'ios';
CREATE UNIQUE INDEX apps_user_package_key ON apps (user_id, package_name) WHERE platform = 'android';

-- Custom short-link domains. A domain is active once its TXT record held the token (verified_at).
CREATE TABLE domains (
  id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id            uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  hostname           text NOT NULL,
  verification_token text NOT NULL,
  verified_at        timestamptz,
  -- Where unknown codes on this domain go (a 302 instead of the 404 page).
  not_found_url      text,
  created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX domains_user_idx ON domains (user_id, created_at, id);
-- Several accounts may claim a hostname while none has proven it; only one may hold it active.
CREATE UNIQUE INDEX domains_user_hostname_key ON domains (user_id, hostname);
CREATE UNIQUE INDEX domains_active_hostname_key ON domains (hostname) WHERE verified_at IS NOT NULL;

-- A link on a custom domain; NULL is the default (shared) domain. A domain with links cannot go.
ALTER TABLE links ADD COLUMN domain_id uuid REFERENCES domains (id) ON DELETE RESTRICT;
-- Codes are unique per domain. The default domain keeps the name of the old constraint, which the
-- repository recognises; NULLs never collide in a unique index, hence two partial ones.
ALTER TABLE links DROP CONSTRAINT links_code_key;
CREATE UNIQUE INDEX links_code_key ON links (code) WHERE domain_id IS NULL;
CREATE UNIQUE INDEX links_domain_code_key ON links (domain_id, code) WHERE domain_id IS NOT NULL;
-- Rebuilding the link cache pages through every link in this order.
CREATE INDEX links_code_id_idx ON links (code, id);

-- Visits of link-preview crawlers per link and UTC hour: shown as `previews`, never as clicks. A
-- few per shared link, so one small table serves every range exactly.
CREATE TABLE link_previews_hourly (
  link_id  uuid NOT NULL,
  bucket   timestamptz NOT NULL,
  previews bigint NOT NULL,
  PRIMARY KEY (link_id, bucket)
);
