import { z } from 'zod';
import { appUrlSchema, isoDateTimeOrDate, MAX_URL_BYTES, successEnvelope, timestampSchema, webUrlSchema } from './common.js';

/** Path segments the short-link host serves itself, so no custom slug may take them. */
export const RESERVED_SLUGS = new Set([
  'healthz', 'readyz', 'metrics', 'api', 'docs', 'static', 'assets', 'admin', 'login', 'logout', 'register',
]);

const versionSchema = z.string().trim().regex(/^\d+(\.\d+){0,3}$/, 'must be a dotted version such as 2.4.1');

export const slugSchema = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9_-]{3,64}$/, 'must be 3-64 letters, digits, "-" or "_"')
  .refine((slug) => !RESERVED_SLUGS.has(slug.toLowerCase()), 'is reserved');

export const androidLinkSchema = z
  .object({
    url: appUrlSchema,
    appPackageName: z
      .string()
      .trim()
      .max(255)
      .regex(/^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$/, 'must be a package name such as com.example.app'),
    minimumVersion: versionSchema.optional(),
    fallbackUrl: webUrlSchema.optional(),
  })
  .strict()
  .meta({ id: 'AndroidLink' });
export type AndroidLink = z.infer<typeof androidLinkSchema>;

export const iosLinkSchema = z
  .object({
    url: appUrlSchema,
    bundleId: z
      .string()
      .trim()
      .max(255)
      .regex(/^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/, 'must be a bundle identifier such as com.example.app'),
    minimumVersion: versionSchema.optional(),
    fallbackUrl: webUrlSchema.optional(),
  })
  .strict()
  .meta({ id: 'IosLink' });
export type IosLink = z.infer<typeof iosLinkSchema>;

/** customParameters as the query string they become, in bytes: what they add to every destination. */
export const parametersBytes = (params: Record<string, string | null>): number =>
  Object.entries(params)
    .filter(([, value]) => value !== null)
    .reduce((sum, [name, value]) => sum + encodeURIComponent(name).length + encodeURIComponent(value!).length + 2, 0);

const parameterName = z.string().min(1).max(100).refine((v) => !/[\u0000-\u001f\u007f]/.test(v), 'must not contain control characters');
const parameterValue = z.string().max(500).refine((v) => !/[\u0000-\u001f\u007f]/.test(v), 'must not contain control characters');
const PARAMETERS_LIMIT = `must be at most ${MAX_URL_BYTES} bytes as a query string (percent-encoded)`;

export const customParametersSchema = z
  .record(parameterName, parameterValue)
  .refine((params) => Object.keys(params).length <= 50, 'must have at most 50 parameters')
  .refine((params) => parametersBytes(params) <= MAX_URL_BYTES, PARAMETERS_LIMIT)
  .meta({ example: { utm_campaign: 'spring', utm_medium: 'email' } });

/**
 * An ISO 8601 date-time (with a zone) or a bare date; a bare date means 00:00 UTC of that day.
 * Parsed into a Date.
 */
export const expirationDateSchema = isoDateTimeOrDate('must be an ISO 8601 date or date-time')
  .transform((value) => new Date(value))
  .meta({ example: '2026-12-31T23:59:59.000Z' });

/** Fields a link holds, as validated on create and after a PUT has been merged. */
export const linkFieldsSchema = z
  .object({
    // zod counts characters (code points): 200 of them are at most 800 bytes.
    title: z.string().trim().min(1, 'must not be empty').max(200),
    defaultUrl: webUrlSchema,
    androidLink: androidLinkSchema.optional(),
    iosLink: iosLinkSchema.optional(),
    desktopUrl: webUrlSchema.optional(),
    customParameters: customParametersSchema.optional(),
    expirationDate: expirationDateSchema.optional(),
  })
  .strict();
export type LinkFields = z.infer<typeof linkFieldsSchema>;

export const createLinkBodySchema = linkFieldsSchema.extend({ slug: slugSchema.optional() }).strict();
export type CreateLinkBody = z.input<typeof createLinkBodySchema>;
export type CreateLinkInput = z.output<typeof createLinkBodySchema>;

const nullable = <T extends z.ZodType>(schema: T) => schema.nullable().optional();

/**
 * PUT body: a JSON Merge Patch (RFC 7396) of the link. Omitted fields keep their values, nested
 * objects merge field by field, and `null` clears an optional field. The merged result is then
 * validated with linkFieldsSchema, so a nested object created by PUT must carry its required fields.
 */
export const updateLinkBodySchema = z
  .object({
    title: linkFieldsSchema.shape.title.optional(),
    defaultUrl: webUrlSchema.optional(),
    androidLink: nullable(
      z
        .object({
          url: appUrlSchema.optional(),
          appPackageName: androidLinkSchema.shape.appPackageName.optional(),
          minimumVersion: nullable(versionSchema),
          fallbackUrl: nullable(webUrlSchema),
        })
        .strict(),
    ),
    iosLink: nullable(
      z
        .object({
          url: appUrlSchema.optional(),
          bundleId: iosLinkSchema.shape.bundleId.optional(),
          minimumVersion: nullable(versionSchema),
          fallbackUrl: nullable(webUrlSchema),
        })
        .strict(),
    ),
    desktopUrl: nullable(webUrlSchema),
    customParameters: nullable(z.record(parameterName, parameterValue.nullable())),
    expirationDate: nullable(isoDateTimeOrDate('must be an ISO 8601 date or date-time')),
  })
  .strict();
export type UpdateLinkBody = z.input<typeof updateLinkBodySchema>;

export const linkSchema = z
  .object({
    id: z.string(),
    url: z.string().meta({ description: 'The short URL, on SHORT_URL_BASE' }),
    title: z.string(),
    defaultUrl: z.string(),
    androidLink: androidLinkSchema.optional(),
    iosLink: iosLinkSchema.optional(),
    desktopUrl: z.string().optional(),
    customParameters: z.record(z.string(), z.string()).optional(),
    expirationDate: timestampSchema.optional(),
    createdAt: timestampSchema,
    updatedAt: timestampSchema,
  })
  .meta({ id: 'Link' });
export type Link = z.infer<typeof linkSchema>;

export const linkSummarySchema = linkSchema
  .pick({ id: true, url: true, title: true, defaultUrl: true, createdAt: true, updatedAt: true })
  .meta({ id: 'LinkSummary' });
export type LinkSummary = z.infer<typeof linkSummarySchema>;

export const LINK_SORT_FIELDS = ['createdAt', 'updatedAt', 'title', 'defaultUrl'] as const;
export type LinkSortField = (typeof LINK_SORT_FIELDS)[number];

export const listLinksQuerySchema = z
  .object({
    page: z.coerce.number({ error: 'must be an integer' }).int('must be an integer').min(1, 'must be at least 1').default(1),
    limit: z.coerce
      .number({ error: 'must be an integer' })
      .int('must be an integer')
      .min(1, 'must be between 1 and 100')
      .max(100, 'must be between 1 and 100')
      .default(10),
    sortBy: z.enum(LINK_SORT_FIELDS, { error: `must be one of ${LINK_SORT_FIELDS.join(', ')}` }).default('createdAt'),
    sortDirection: z.enum(['asc', 'desc'], { error: 'must be asc or desc' }).default('desc'),
  })
  .strict();
export type ListLinksQuery = z.infer<typeof listLinksQuerySchema>;

export const paginationSchema = z
  .object({ total: z.number().int(), page: z.number().int(), limit: z.number().int(), pages: z.number().int() })
  .meta({ id: 'Pagination' });
export type Pagination = z.infer<typeof paginationSchema>;

export const linkResponseSchema = successEnvelope(z.object({ link: linkSchema }));
export const linkListResponseSchema = successEnvelope(
  z.object({ links: z.array(linkSummarySchema), pagination: paginationSchema }),
);
