-- The link a Firebase Dynamic Link became: the canonical key of its FDL parameters (see
-- dynamicLinkKey). The same parameters given again (POST /v1/shortLinks, a long link's visit)
-- find the same link instead of making another, as FDL answered with the same short link. NULL for
-- every other link.
ALTER TABLE links ADD COLUMN dynamic_link_key text;
-- One link per key on each domain. On a custom domain the domain names its one owner; the default
-- domain is shared by every account, so there the key is unique per account: one account's
-- parameters never find another account's link. NULLs never collide in a unique index, hence two
-- partial ones, as for the short codes.
CREATE UNIQUE INDEX links_dynamic_link_key ON links (user_id, dynamic_link_key)
  WHERE domain_id IS NULL AND dynamic_link_key IS NOT NULL;
CREATE UNIQUE INDEX links_domain_dynamic_link_key ON links (domain_id, dynamic_link_key)
  WHERE domain_id IS NOT NULL AND dynamic_link_key IS NOT NULL;
