import { finished, Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AppError,
  conflict,
  type CreateImportInput,
  forbidden,
  type Import,
  type ImportedLink,
  importRowReader,
  type ImportRow,
  invalidRequest,
  type ListImportRowsQuery,
  MAX_IMPORT_BYTES,
  MAX_IMPORT_ROWS,
  notFound,
  type Pagination,
  type RowReader,
} from '@deeplink/core';
import {
  ImportRunningError,
  type LinkImportRecord,
  type LinkImportRowRecord,
  type LinkImportsRepository,
  type LinkRecord,
  type LinksRepository,
  type TransactionSql,
} from '@deeplink/core/db';
import { CsvError, parse } from 'csv-parse';
import type { FastifyBaseLogger } from 'fastify';
import type { Principal } from './auth-service.js';
import type { ConcurrencyLimit } from './concurrency-limit.js';
import type { LinksService } from './links-service.js';
import { sameLinkFields } from './same-link-fields.js';

/** Rows written per transaction: big enough to be quick, small enough that a retry row by row is cheap. */
export const IMPORT_BATCH_ROWS = 500;
/** The longest one CSV record may be; a longer one (a quote never closed) stops the import. */
const MAX_RECORD_BYTES = 64 * 1024;

/** A row read from the file, before its batch decides what becomes of it. */
type PendingRow = { line: number } & (
  | { ok: true; link: ImportedLink }
  | { ok: false; code?: string; errors: LinkImportRowRecord['errors'] }
);

const MB = 1024 * 1024;
const uploadEnded = () => invalidRequest('The upload ended before the end of the file');
const tooLarge = () => new AppError('tooLarge', `The file is larger than ${MAX_IMPORT_BYTES / MB} MB; split it and import each part`);

/**
 * Link imports: an import is created with its options, then reads its CSV file as a stream, a
 * batch of rows at a time; each batch's links and its report commit in one transaction, and a
 * batch that fails is written again row by row, so one bad row never loses the others.
 */
export function linkImportService(deps: {
  imports: LinkImportsRepository;
  links: LinksRepository;
  linksService: LinksService;
  /** One running import per account in this process, and a few in all (the database holds one per account across processes). */
  running: ConcurrencyLimit;
  log: FastifyBaseLogger;
}) {
  const { imports } = deps;

  const toImport = (record: LinkImportRecord): Import => ({
    id: record.id,
    format: record.format,
    ...(record.domain !== null && { domain: record.domain }),
    dryRun: record.dryRun,
    status: record.status,
    ...(record.error !== null && { error: { message: record.error } }),
    bytesRead: record.bytesRead,
    ...(record.totalBytes !== null && { totalBytes: record.totalBytes }),
    rows: record.rows,
    created: record.created,
    updated: record.updated,
    unchanged: record.unchanged,
    refused: record.refused,
    createdAt: record.createdAt.toISOString(),
    ...(record.finishedAt !== null && { finishedAt: record.finishedAt.toISOString() }),
  });

  const toRow = (row: LinkImportRowRecord): ImportRow => ({
    line: row.line,
    ...(row.code !== null && { code: row.code }),
    outcome: row.outcome,
    ...(row.linkId !== null && { linkId: row.linkId }),
    ...(row.errors !== null && { errors: row.errors }),
    ...(row.warnings !== null && { warnings: row.warnings }),
  });

  const owned = async (principal: Principal, id: string) => {
    const record = await imports.findById(id);
    if (!record) throw notFound('Import not found');
    if (record.userId !== principal.userId) throw forbidden('This import belongs to another account');
    return record;
  };

  /**
   * Writes one batch: its new links, its changed ones and its report, in one transaction; a
   * dry run writes the report only. Answers the report rows and the links to cache.
   */
  async function writeBatch(
    record: LinkImportRecord,
    rows: PendingRow[],
    bytesRead: number,
  ): Promise<{ report: LinkImportRowRecord[]; written: LinkRecord[] }> {
    const valid = rows.flatMap((row) => (row.ok ? [{ line: row.line, ...row.link }] : []));
    const existing = new Map(
      (
        await deps.links.findByCodes(
          record.domainId,
          valid.map((row) => row.code),
        )
      ).map((link) => [link.code, link]),
    );
    const report = new Map<number, LinkImportRowRecord>();
    const refuse = (line: number, code: string | null, errors: LinkImportRowRecord['errors']) =>
      report.set(line, { line, code, outcome: 'refused', linkId: null, errors, warnings: null });
    for (const row of rows) if (!row.ok) refuse(row.line, row.code ?? null, row.errors);

    type ValidRow = (typeof valid)[number];
    /** A row that became (or, in a dry run, would become) the link `linkId`. */
    const accept = (row: ValidRow, outcome: 'created' | 'updated' | 'unchanged', linkId: string | null) =>
      report.set(row.line, { line: row.line, code: row.code, outcome, linkId, errors: null, warnings: row.warnings });

    const creates: ValidRow[] = [];
    const updates: (ValidRow & { id: string })[] = [];
    for (const row of valid) {
      const link = existing.get(row.code);
      if (!link) creates.push(row);
      else if (link.userId !== record.userId) refuse(row.line, row.code, [{ field: 'code', message: 'is taken by another account' }]);
      else if (sameLinkFields(link, row.fields)) accept(row, 'unchanged', link.id);
      else updates.push({ ...row, id: link.id });
    }

    const written: LinkRecord[] = [];
    const finish = async (tx?: TransactionSql) => {
      const ordered = [...report.values()].sort((a, b) => a.line - b.line);
      await imports.recordBatch(record.id, { bytesRead, rows: ordered }, tx);
      return ordered;
    };
    if (record.dryRun) {
      for (const row of creates) accept(row, 'created', null);
      for (const row of updates) accept(row, 'updated', row.id);
      return { report: await finish(), written };
    }
    const ordered = await imports.transaction(async (tx) => {
      const created = new Map(
        (await deps.links.insertImported(tx, record.userId, record.domainId, creates)).map((link) => [link.code, link]),
      );
      for (const row of creates) {
        const link = created.get(row.code);
        if (link) accept(row, 'created', link.id);
        else refuse(row.line, row.code, [{ field: 'code', message: 'was taken by another link while the file was read' }]);
      }
      const updated = await deps.links.updateImported(tx, updates);
      const updatedIds = new Set(updated.map((link) => link.id));
      for (const row of updates) {
        if (updatedIds.has(row.id)) accept(row, 'updated', row.id);
        else refuse(row.line, row.code, [{ field: 'code', message: 'names a link deleted while the file was read' }]);
      }
      written.push(...created.values(), ...updated);
      return finish(tx);
    });
    return { report: ordered, written };
  }

  /** A batch in one transaction, or, when that fails, each of its rows in a transaction of its own. */
  async function processBatch(record: LinkImportRecord, rows: PendingRow[], bytesRead: number): Promise<void> {
    try {
      const { written } = await writeBatch(record, rows, bytesRead);
      await deps.linksService.cacheWritten(written);
      return;
    } catch (error) {
      if (rows.length === 1) {
        deps.log.error({ err: error, importId: record.id, line: rows[0]!.line }, 'import row could not be written');
        const row = rows[0]!;
        const code = row.ok ? row.link.code : (row.code ?? null);
        await imports.recordBatch(record.id, {
          bytesRead,
          rows: [
            {
              line: row.line,
              code,
              outcome: 'refused',
              linkId: null,
              errors: [{ field: '(row)', message: 'could not be written' }],
              warnings: null,
            },
          ],
        });
        return;
      }
      deps.log.warn({ err: error, importId: record.id }, 'import batch failed; writing its rows one by one');
    }
    for (const row of rows) await processBatch(record, [row], bytesRead);
  }

  /** Reads the file a batch at a time, counting its bytes in `progress`; throws the AppError that stops the import. */
  async function readFile(record: LinkImportRecord, body: Readable, progress: { bytesRead: number }): Promise<void> {
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        progress.bytesRead += chunk.length;
        done(progress.bytesRead > MAX_IMPORT_BYTES ? tooLarge() : null, chunk);
      },
    });
    const parser = parse({ bom: true, relax_column_count: true, skip_empty_lines: true, info: true, max_record_size: MAX_RECORD_BYTES });
    let read: RowReader | undefined;
    let rows = 0;
    let batch: PendingRow[] = [];
    // A code's first line: a later row asking for it again is refused, so that a second run of the
    // same file finds every row unchanged instead of each repeat undoing the one before it.
    const firstLine = new Map<string, number>();

    const consume = async () => {
      for await (const { record: cells, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
        if (!read) {
          const reader = importRowReader(record.format, cells, record.mapping ?? undefined);
          if (!reader.ok) throw invalidRequest("The file's columns do not fit its format; nothing was imported", reader.errors);
          read = reader.read;
          continue;
        }
        if (++rows > MAX_IMPORT_ROWS) throw invalidRequest(`The file has more than ${MAX_IMPORT_ROWS} rows; split it and import each part`);
        const row = read(cells);
        const line = info.lines;
        if (row.ok) {
          const earlier = firstLine.get(row.link.code);
          const problems = deps.linksService.destinationProblems(row.link.fields);
          if (earlier !== undefined)
            batch.push({
              line,
              ok: false,
              code: row.link.code,
              errors: [{ field: 'code', message: `repeats the code of line ${earlier}` }],
            });
          else if (problems.length > 0) batch.push({ line, ok: false, code: row.link.code, errors: problems });
          else batch.push({ line, ...row });
          if (earlier === undefined) firstLine.set(row.link.code, line);
        } else {
          batch.push({ line, ...row });
        }
        if (batch.length >= IMPORT_BATCH_ROWS) {
          await processBatch(record, batch, progress.bytesRead);
          batch = [];
        }
      }
      if (!read) throw invalidRequest('The file is empty: it needs a header row, then one row per link');
      if (batch.length > 0) await processBatch(record, batch, progress.bytesRead);
    };
    // The upload is piped rather than part of the pipeline: an error of the import must not destroy
    // the request, whose response still has to say why (the route closes the connection after it).
    // An upload that errors or closes before its end (the client went away) stops the import.
    finished(body, (error) => {
      if (error) counter.destroy(uploadEnded());
    });
    body.pipe(counter);
    try {
      await Promise.all([pipeline(counter, parser), consume()]);
    } catch (error) {
      body.unpipe(counter);
      body.pause();
      parser.destroy();
      if (error instanceof AppError) throw error;
      if (error instanceof CsvError) throw invalidRequest(`The file is not valid CSV: ${error.message}`);
      throw error;
    }
  }

  return {
    /** A new import of the caller's, on one of their active domains or the default one, waiting for its file. */
    async create(principal: Principal, body: CreateImportInput): Promise<Import> {
      const domainId = await deps.linksService.domainIdOf(principal, body.domain, 'domain');
      return toImport(
        await imports.create(principal.userId, { format: body.format, domainId, dryRun: body.dryRun, mapping: body.mapping }),
      );
    },

    async get(principal: Principal, id: string): Promise<Import> {
      return toImport(await owned(principal, id));
    },

    /** A page of an import's report, by line. */
    async rows(principal: Principal, id: string, query: ListImportRowsQuery): Promise<{ rows: ImportRow[]; pagination: Pagination }> {
      await owned(principal, id);
      const page = await imports.listRows(id, { offset: (query.page - 1) * query.limit, limit: query.limit, outcome: query.outcome });
      return {
        rows: page.rows.map(toRow),
        pagination: { total: page.total, page: query.page, limit: query.limit, pages: Math.ceil(page.total / query.limit) },
      };
    },

    /**
     * Reads the import's file from `body` (`totalBytes` long when the upload said so) and answers
     * the finished import. An error that stops it (the file too large or not CSV, its columns not
     * those of its format, the upload cut short) fails the import and is thrown; the rows of the
     * batches written before it stay, each whole.
     */
    async run(principal: Principal, id: string, body: Readable, totalBytes: number | undefined): Promise<Import> {
      const record = await owned(principal, id);
      if (record.status !== 'waiting') throw conflict('This import has already read its file; create another');
      if (totalBytes !== undefined && totalBytes > MAX_IMPORT_BYTES) throw tooLarge();
      const release = deps.running.acquire(principal.userId);
      try {
        try {
          if (!(await imports.start(id, principal.userId, totalBytes ?? null)))
            throw conflict('This import has already read its file; create another');
        } catch (error) {
          if (error instanceof ImportRunningError) throw conflict('Another import of this account is running; wait until it ends');
          throw error;
        }
        const progress = { bytesRead: 0 };
        try {
          await readFile(record, body, progress);
        } catch (error) {
          const message = error instanceof AppError ? error.message : 'The import stopped on an internal error';
          if (!(error instanceof AppError)) deps.log.error({ err: error, importId: id }, 'import failed');
          await imports.finish(id, { bytesRead: progress.bytesRead, error: message });
          throw error;
        }
        return toImport(await imports.finish(id, progress));
      } finally {
        release();
      }
    },
  };
}
export type LinkImportService = ReturnType<typeof linkImportService>;
