import type { ImportFormat, ImportMapping, ImportOutcome, ImportProblem, ImportStatus } from '../schemas/imports.js';
import type { Sql, TransactionSql } from './client.js';
import { isUniqueViolation } from './errors.js';
import { isUuid } from './uuid.js';

export interface LinkImportRecord {
  id: string;
  userId: string;
  format: ImportFormat;
  domainId: string | null;
  /** The custom domain's hostname; null for the default domain. */
  domain: string | null;
  dryRun: boolean;
  mapping: ImportMapping | null;
  status: ImportStatus;
  error: string | null;
  totalBytes: number | null;
  bytesRead: number;
  rows: number;
  created: number;
  updated: number;
  unchanged: number;
  refused: number;
  createdAt: Date;
  finishedAt: Date | null;
}

/** What became of one line of an import's file. */
export interface LinkImportRowRecord {
  line: number;
  code: string | null;
  outcome: ImportOutcome;
  linkId: string | null;
  errors: ImportProblem[] | null;
  warnings: ImportProblem[] | null;
}

/** How far a batch moved an import: the bytes read so far, and the outcomes of its rows. */
export interface ImportProgress {
  bytesRead: number;
  rows: LinkImportRowRecord[];
}

/** Thrown by start when the account already has an import running; nothing changed. */
export class ImportRunningError extends Error {
  override name = 'ImportRunningError';
}

/** An account's imports kept (the newest); older ones go when it starts another. */
export const IMPORTS_KEPT = 20;
/** A running import whose batches stopped this long ago belonged to a process that died. */
const ABANDONED_AFTER = "interval '2 minutes'";

/** Link imports and the report of each line. SQL for them lives here and nowhere else. */
export function linkImportsRepository(sql: Sql) {
  const columns = sql`
    id, user_id AS "userId", format, domain_id AS "domainId",
    (SELECT d.hostname FROM domains d WHERE d.id = link_imports.domain_id) AS domain,
    dry_run AS "dryRun", mapping, status, error, total_bytes AS "totalBytes", bytes_read AS "bytesRead",
    rows_read AS rows, created, updated, unchanged, refused, created_at AS "createdAt", finished_at AS "finishedAt"`;
  const abandoned = sql.unsafe(ABANDONED_AFTER);

  return {
    /** A new import waiting for its file; the account's imports beyond the newest IMPORTS_KEPT go. */
    async create(
      userId: string,
      options: { format: ImportFormat; domainId: string | null; dryRun: boolean; mapping?: ImportMapping },
    ): Promise<LinkImportRecord> {
      return sql.begin(async (tx) => {
        const [row] = await tx<LinkImportRecord[]>`
          INSERT INTO link_imports ${tx({
            user_id: userId,
            format: options.format,
            domain_id: options.domainId,
            dry_run: options.dryRun,
            mapping: options.mapping ? tx.json(options.mapping) : null,
          })}
          RETURNING ${columns}`;
        await tx`
          DELETE FROM link_imports WHERE user_id = ${userId} AND status <> 'running' AND id NOT IN (
            SELECT id FROM link_imports WHERE user_id = ${userId} ORDER BY created_at DESC, id DESC LIMIT ${IMPORTS_KEPT})`;
        return row!;
      });
    },

    async findById(id: string): Promise<LinkImportRecord | undefined> {
      if (!isUuid(id)) return undefined;
      const [row] = await sql<LinkImportRecord[]>`SELECT ${columns} FROM link_imports WHERE id = ${id}`;
      return row;
    },

    /**
     * Marks a waiting import running, with its file's size when known. Throws ImportRunningError
     * when another import of the account runs (one whose process died long enough ago is failed
     * first); false when this one is no longer waiting.
     */
    async start(id: string, userId: string, totalBytes: number | null): Promise<boolean> {
      await sql`
        UPDATE link_imports SET status = 'failed', error = 'stopped: the process running it ended', finished_at = now()
        WHERE user_id = ${userId} AND status = 'running' AND progressed_at < now() - ${abandoned}`;
      try {
        const started = await sql`
          UPDATE link_imports SET status = 'running', total_bytes = ${totalBytes}, progressed_at = now()
          WHERE id = ${id} AND status = 'waiting'`;
        return started.count === 1;
      } catch (error) {
        if (isUniqueViolation(error, 'link_imports_one_running')) throw new ImportRunningError();
        throw error;
      }
    },

    /** Runs `work` in one transaction: a batch's links and its report commit together or not at all. */
    transaction<T>(work: (tx: TransactionSql) => Promise<T>): Promise<T> {
      return sql.begin(work) as Promise<T>;
    },

    /** Records a batch's rows and moves the counts on, within the batch's transaction (or alone). */
    async recordBatch(id: string, { bytesRead, rows }: ImportProgress, db: Sql | TransactionSql = sql): Promise<void> {
      const count = (outcome: ImportOutcome) => rows.filter((row) => row.outcome === outcome).length;
      if (rows.length > 0) {
        await db`
          INSERT INTO link_import_rows ${db(
            rows.map((row) => ({
              import_id: id,
              line: row.line,
              code: row.code,
              outcome: row.outcome,
              link_id: row.linkId,
              errors: row.errors ? db.json(row.errors) : null,
              warnings: row.warnings?.length ? db.json(row.warnings) : null,
            })),
          )}`;
      }
      await db`
        UPDATE link_imports SET
          bytes_read = ${bytesRead}, rows_read = rows_read + ${rows.length}, progressed_at = now(),
          created = created + ${count('created')}, updated = updated + ${count('updated')},
          unchanged = unchanged + ${count('unchanged')}, refused = refused + ${count('refused')}
        WHERE id = ${id}`;
    },

    /** Ends a running import: done, or failed with the reason. */
    async finish(id: string, outcome: { bytesRead: number; error?: string }): Promise<LinkImportRecord> {
      const [row] = await sql<LinkImportRecord[]>`
        UPDATE link_imports SET status = ${outcome.error === undefined ? 'done' : 'failed'}, error = ${outcome.error ?? null},
          bytes_read = ${outcome.bytesRead}, finished_at = now()
        WHERE id = ${id}
        RETURNING ${columns}`;
      return row!;
    },

    /** A page of an import's rows by line, only those of `outcome` when given, with how many there are. */
    async listRows(
      id: string,
      page: { offset: number; limit: number; outcome?: ImportOutcome },
    ): Promise<{ rows: LinkImportRowRecord[]; total: number }> {
      const where = page.outcome ? sql`import_id = ${id} AND outcome = ${page.outcome}` : sql`import_id = ${id}`;
      const [rows, [count]] = await Promise.all([
        sql<LinkImportRowRecord[]>`
          SELECT line, code, outcome, link_id AS "linkId", errors, warnings FROM link_import_rows
          WHERE ${where} ORDER BY line LIMIT ${page.limit} OFFSET ${page.offset}`,
        sql<{ total: number }[]>`SELECT count(*)::int AS total FROM link_import_rows WHERE ${where}`,
      ]);
      return { rows, total: count?.total ?? 0 };
    },
  };
}
export type LinkImportsRepository = ReturnType<typeof linkImportsRepository>;
