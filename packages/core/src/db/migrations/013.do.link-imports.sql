-- Link imports (POST /api/imports): one row per import, its progress and counts, and one row per
-- line of its file saying what became of it. An account keeps its latest imports only (the API
-- deletes older ones when it starts another), and both go with the account.
CREATE TABLE link_imports (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  format       text NOT NULL,
  -- The custom domain the links go on (null: the default domain); the import goes with the domain.
  domain_id    uuid REFERENCES domains (id) ON DELETE CASCADE,
  dry_run      boolean NOT NULL,
  -- The generic format's column mapping.
  mapping      jsonb,
  status       text NOT NULL DEFAULT 'waiting' CHECK (status IN ('waiting', 'running', 'done', 'failed')),
  error        text,
  total_bytes  bigint,
  bytes_read   bigint NOT NULL DEFAULT 0,
  rows_read    integer NOT NULL DEFAULT 0,
  created      integer NOT NULL DEFAULT 0,
  updated      integer NOT NULL DEFAULT 0,
  unchanged    integer NOT NULL DEFAULT 0,
  refused      integer NOT NULL DEFAULT 0,
  created_at   timestamptz NOT NULL DEFAULT now(),
  -- Moved on by every batch: a running import whose process died stops holding the account's place.
  progressed_at timestamptz NOT NULL DEFAULT now(),
  finished_at  timestamptz
);
CREATE INDEX link_imports_user ON link_imports (user_id, created_at);
-- One running import per account, across every API process.
CREATE UNIQUE INDEX link_imports_one_running ON link_imports (user_id) WHERE status = 'running';

CREATE TABLE link_import_rows (
  import_id  uuid NOT NULL REFERENCES link_imports (id) ON DELETE CASCADE,
  line       integer NOT NULL,
  code       text,
  outcome    text NOT NULL CHECK (outcome IN ('created', 'updated', 'unchanged', 'refused')),
  -- The link created or updated; no foreign key: the report outlives a link deleted since.
  link_id    uuid,
  errors     jsonb,
  warnings   jsonb,
  PRIMARY KEY (import_id, line)
);
CREATE INDEX link_import_rows_outcome ON link_import_rows (import_id, outcome, line);
