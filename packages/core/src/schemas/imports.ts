import { z } from 'zod';
import { successEnvelope, timestampSchema } from './common.js';
import { hostnameSchema } from './domains.js';
import { pageQueryFields, paginationSchema } from './links.js';

/** The largest CSV file one import reads: past it, 413. */
export const MAX_IMPORT_BYTES = 50 * 1024 * 1024;
/** The most rows (links) one import reads: past it, the import stops with an error. */
export const MAX_IMPORT_ROWS = 100_000;

/** The CSV formats the importer reads (docs/import.md lists each one's columns). */
export const IMPORT_FORMATS = ['takeout', 'generic', 'bitly', 'shlink', 'kutt', 'yourls'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/** What a column of a generic CSV can hold: the link's code, and each field a link has. */
export const IMPORT_FIELDS = [
  'code',
  'defaultUrl',
  'title',
  'tags',
  'desktopUrl',
  'androidUrl',
  'androidPackageName',
  'androidMinimumVersion',
  'androidFallbackUrl',
  'iosUrl',
  'iosBundleId',
  'iosMinimumVersion',
  'iosFallbackUrl',
  'expirationDate',
  'expiredUrl',
  'socialTitle',
  'socialDescription',
  'socialImageUrl',
  'createdAt',
] as const;
export type ImportField = (typeof IMPORT_FIELDS)[number];

const headerName = z.string().trim().min(1, 'must name a column').max(200);

/** Which column of a generic CSV (by its header, case-insensitively) holds which field. */
export const importMappingSchema = z
  .object(
    Object.fromEntries(IMPORT_FIELDS.map((field) => [field, headerName.optional()])) as Record<
      ImportField,
      z.ZodOptional<typeof headerName>
    >,
  )
  .strict()
  .refine((mapping) => mapping.code !== undefined, { message: 'must name the column of the short code', path: ['code'] })
  .refine((mapping) => mapping.defaultUrl !== undefined, { message: 'must name the column of the destination', path: ['defaultUrl'] })
  .meta({
    id: 'ImportMapping',
    description: 'For the generic format: the header of the column holding each field; code and defaultUrl are required',
    example: { code: 'slug', defaultUrl: 'destination', title: 'name', tags: 'labels' },
  });
export type ImportMapping = z.infer<typeof importMappingSchema>;

export const createImportBodySchema = z
  .object({
    format: z.enum(IMPORT_FORMATS, { error: `must be one of ${IMPORT_FORMATS.join(', ')}` }).meta({ example: 'takeout' }),
    domain: hostnameSchema
      .optional()
      .meta({ description: 'One of your active custom domains the links go on; the default domain when omitted' }),
    dryRun: z.boolean().default(false).meta({ description: 'Check every row and report, writing no link' }),
    mapping: importMappingSchema.optional(),
  })
  .strict()
  .superRefine((body, context) => {
    if (body.format === 'generic' && !body.mapping)
      context.addIssue({ code: 'custom', path: ['mapping'], message: 'is required for the generic format' });
    if (body.format !== 'generic' && body.mapping)
      context.addIssue({ code: 'custom', path: ['mapping'], message: 'is only for the generic format' });
  });
export type CreateImportBody = z.input<typeof createImportBodySchema>;
export type CreateImportInput = z.output<typeof createImportBodySchema>;

export const IMPORT_STATUSES = ['waiting', 'running', 'done', 'failed'] as const;
export type ImportStatus = (typeof IMPORT_STATUSES)[number];

export const importSchema = z
  .object({
    id: z.string(),
    format: z.enum(IMPORT_FORMATS),
    domain: z.string().optional().meta({ description: 'The custom domain the links go on; absent for the default domain' }),
    dryRun: z.boolean(),
    status: z.enum(IMPORT_STATUSES).meta({
      description: 'waiting for its file, running, done, or failed (see error); rows written before a failure stay',
    }),
    error: z.object({ message: z.string() }).optional(),
    bytesRead: z.number().int().meta({ description: 'Bytes of the file read so far' }),
    totalBytes: z.number().int().optional().meta({ description: "The file's size, when its upload said it (Content-Length)" }),
    rows: z.number().int().meta({ description: 'Rows read so far, each counted below once done' }),
    created: z.number().int(),
    updated: z.number().int(),
    unchanged: z.number().int(),
    refused: z.number().int(),
    createdAt: timestampSchema,
    finishedAt: timestampSchema.optional(),
  })
  .meta({ id: 'Import' });
export type Import = z.infer<typeof importSchema>;
export const importResponseSchema = successEnvelope(z.object({ import: importSchema }));

export const IMPORT_OUTCOMES = ['created', 'updated', 'unchanged', 'refused'] as const;
export type ImportOutcome = (typeof IMPORT_OUTCOMES)[number];

export const importProblemSchema = z.object({
  field: z.string().meta({ description: 'The link field, FDL parameter or column concerned', example: 'defaultUrl' }),
  message: z.string(),
});
export type ImportProblem = z.infer<typeof importProblemSchema>;

export const importRowSchema = z
  .object({
    line: z.number().int().meta({ description: "The row's line in the file (the header is line 1)", example: 2 }),
    code: z.string().optional().meta({ description: 'The short code the row asks for, when it has one' }),
    outcome: z.enum(IMPORT_OUTCOMES).meta({ description: 'In a dry run: what a real run would do' }),
    linkId: z.string().optional(),
    errors: z.array(importProblemSchema).optional().meta({ description: 'Why the row was refused' }),
    warnings: z.array(importProblemSchema).optional().meta({ description: 'What of the row the link does not do as its source did' }),
  })
  .meta({ id: 'ImportRow' });
export type ImportRow = z.infer<typeof importRowSchema>;

export const listImportRowsQuerySchema = z
  .object({
    outcome: z
      .enum(IMPORT_OUTCOMES, { error: `must be one of ${IMPORT_OUTCOMES.join(', ')}` })
      .optional()
      .meta({ description: 'Only the rows of this outcome (refused: the rows to fix)', example: 'refused' }),
    ...pageQueryFields({ maxLimit: 500, defaultLimit: 100, page: 'Page number, from 1', limit: 'Rows per page, 1-500' }),
  })
  .strict();
export type ListImportRowsQuery = z.infer<typeof listImportRowsQuerySchema>;

export const importRowsResponseSchema = successEnvelope(z.object({ rows: z.array(importRowSchema), pagination: paginationSchema }));
