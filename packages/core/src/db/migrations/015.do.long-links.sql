-- Long dynamic links (/?link=…): a custom domain's allowed URL patterns, the destinations its long
-- links may have (URLs with * wildcards, checked by the API; see routing/url-patterns.ts). Empty:
-- the domain answers no long link.
ALTER TABLE domains ADD COLUMN allowed_url_patterns text[] NOT NULL DEFAULT '{}';
