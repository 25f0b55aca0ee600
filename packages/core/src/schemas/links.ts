import { z } from 'zod';
import { hostnameSchema } from './domains.js';
import {
  appUrlSchema,
  hasControlCharacters,
  isoDateTimeOrDate,
  MAX_URL_BYTES,
  storableText,
  successEnvelope,
  timestampSchema,
  webUrlSchema,
} from './common.js';

/** Path segments the short-link host serves itself, so no custom slug may take them. */
export const RESERVED_SLUGS = new Set([
  'healthz',
  'readyz',
  'metrics',
  'api',
  'docs',
  'static',
  'assets',
  'admin',
  'login',
  'logout',
  'register',
]);

const versionSchema = z
  .string()
  .trim()
  .regex(/^\d+(\.\d+){0,3}$/, 'must be a dotted version such as 2.4.1');

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

const bundleIdSchema = z
  .string()
  .trim()
  .max(255)
  .regex(/^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/, 'must be a bundle identifier such as com.example.app');

export const iosLinkSchema = z
  .object({
    url: appUrlSchema,
    bundleId: bundleIdSchema,
    minimumVersion: versionSchema.optional(),
    fallbackUrl: webUrlSchema.optional(),
    ipadUrl: appUrlSchema
      .optional()
      .meta({ description: 'The URL that opens the iPad app, when iPads have an app of their own (with ipadBundleId)' }),
    ipadBundleId: bundleIdSchema.optional().meta({ description: 'The bundle identifier of the iPad app (with ipadUrl)' }),
    ipadFallbackUrl: webUrlSchema.optional().meta({ description: 'Where iPads without the app go, instead of fallbackUrl' }),
    skipAppPage: z
      .boolean()
      .optional()
      .meta({ description: 'true: iOS visitors are redirected at once, without the "open in the app" page (see docs/redirect.md)' }),
  })
  .strict()
  .refine((link) => (link.ipadUrl === undefined) === (link.ipadBundleId === undefined), {
    message: 'ipadUrl and ipadBundleId go together',
    path: ['ipadBundleId'],
  })
  .meta({ id: 'IosLink' });
export type IosLink = z.infer<typeof iosLinkSchema>;

/** What social networks and chat apps show for the link (served to their link-preview crawlers). */
export const socialPreviewSchema = z
  .object({
    title: storableText().trim().min(1, 'must not be empty').max(200),
    description: storableText().trim().min(1, 'must not be empty').max(500).optional(),
    imageUrl: webUrlSchema.optional(),
  })
  .strict()
  .meta({
    id: 'SocialPreview',
    example: { title: 'Spring sale', description: 'Everything 20% off until Sunday', imageUrl: 'https://example.com/spring.png' },
  });
export type SocialPreview = z.infer<typeof socialPreviewSchema>;

/** customParameters as the query string they become, in bytes: what they add to every destination. */
export const parametersBytes = (params: Record<string, string | null>): number =>
  Object.entries(params)
    .filter(([, value]) => value !== null)
    .reduce((sum, [name, value]) => sum + encodeURIComponent(name).length + encodeURIComponent(value!).length + 2, 0);

const parameterText = () => storableText().refine((v) => !hasControlCharacters(v), 'must not contain control characters');
const parameterName = parameterText().min(1).max(100);
const parameterValue = parameterText().max(500);
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

/** How many tags a link may carry, duplicates removed. */
export const MAX_TAGS = 10;
const TAG_PATTERN = /^[a-z0-9_-]{1,32}$/;
const TAG_RULE = 'must be 1-32 characters of a-z, 0-9, "-" or "_"';

/** One tag: trimmed and lower-cased, then 1-32 characters of `a-z 0-9 - _`. */
export const tagSchema = z
  .string()
  .trim()
  .toLowerCase()
  .regex(TAG_PATTERN, TAG_RULE)
  .meta({ description: `A tag: ${TAG_RULE}, compared and stored lower-case`, example: 'spring' });

/** A link's tags: each lower-cased, duplicates removed (first occurrence kept), at most MAX_TAGS. */
export const tagsSchema = z
  .array(tagSchema)
  .max(100, 'must have at most 100 entries')
  .transform((tags) => [...new Set(tags)])
  .refine((tags) => tags.length <= MAX_TAGS, `must have at most ${MAX_TAGS} different tags`)
  .meta({
    description: `Up to ${MAX_TAGS} tags grouping the link (a campaign, a channel); stored lower-case, duplicates removed`,
    example: ['spring', 'newsletter'],
  });

/** The largest click cap a link may have (the column is a 32-bit integer). */
export const MAX_CLICK_CAP = 1_000_000_000;

/** How many clicks a link takes before it sends visitors to its capOverflowUrl (or answers 410). */
export const clickCapSchema = z
  .number({ error: 'must be a positive integer' })
  .int('must be a positive integer')
  .min(1, 'must be a positive integer')
  .max(MAX_CLICK_CAP, `must be at most ${MAX_CLICK_CAP}`)
  .meta({
    description: 'After this many clicks visitors go to capOverflowUrl, or get the 410 page without one (see docs/redirect.md)',
    example: 100,
  });

/** Where visitors of a capped link go past its cap: https only. */
export const capOverflowUrlSchema = webUrlSchema
  // Only http: is left to refuse here (anything else has failed webUrlSchema's own check already).
  .refine((url) => !/^http:/i.test(url), 'must be an https:// URL')
  .meta({ description: 'Where visitors go once the link has had clickCap clicks (https only)', example: 'https://example.com/sold-out' });

/** Fields a link holds, as validated on create and after a PUT has been merged. */
export const linkFieldsSchema = z
  .object({
    // zod counts characters (code points): 200 of them are at most 800 bytes.
    title: storableText().trim().min(1, 'must not be empty').max(200),
    defaultUrl: webUrlSchema,
    androidLink: androidLinkSchema.optional(),
    iosLink: iosLinkSchema.optional(),
    desktopUrl: webUrlSchema.optional(),
    customParameters: customParametersSchema.optional(),
    expirationDate: expirationDateSchema.optional(),
    tags: tagsSchema.optional(),
    expiredUrl: webUrlSchema
      .optional()
      .meta({ description: 'Where the link sends visitors once it has expired (a 302 instead of the 410 page)' }),
    socialPreview: socialPreviewSchema.optional(),
    clickCap: clickCapSchema.optional(),
    capOverflowUrl: capOverflowUrlSchema.optional(),
  })
  .strict();
export type LinkFields = z.infer<typeof linkFieldsSchema>;

/** The bounds of a link's password, in characters. */
export const LINK_PASSWORD_MIN = 6;
export const LINK_PASSWORD_MAX = 128;

/**
 * A link's password, as its owner sets it: kept as it is (no trimming: spaces count), stored only
 * as an argon2id hash and never answered (a link says `passwordProtected` instead).
 */
export const linkPasswordSchema = storableText()
  .min(LINK_PASSWORD_MIN, `must be at least ${LINK_PASSWORD_MIN} characters`)
  .max(LINK_PASSWORD_MAX, `must be at most ${LINK_PASSWORD_MAX} characters`)
  .meta({
    description: `Visitors must enter it before the link sends them anywhere (${LINK_PASSWORD_MIN}-${LINK_PASSWORD_MAX} characters). Write-only: the link answers passwordProtected instead`,
    example: 'spring-preview-2026',
  });

export const createLinkBodySchema = linkFieldsSchema
  .extend({
    password: linkPasswordSchema.optional(),
    slug: slugSchema.optional(),
    domain: hostnameSchema
      .optional()
      .meta({ description: 'One of your active custom domains; the default domain when omitted. Fixed once the link exists' }),
  })
  .strict();
export type CreateLinkBody = z.input<typeof createLinkBodySchema>;

/** GET /links/slug-availability: whether a new link could take `slug` on `domain` now. */
export const slugAvailabilityQuerySchema = z
  .object({
    slug: slugSchema.meta({ description: 'The back-half to check: 3-64 letters, digits, "-" or "_"', example: 'spring-sale' }),
    domain: hostnameSchema
      .optional()
      .meta({ description: 'One of your active custom domains; the default domain when omitted', example: 'go.example.com' }),
  })
  .strict();
export type SlugAvailabilityQuery = z.infer<typeof slugAvailabilityQuerySchema>;

export const slugAvailabilitySchema = z
  .object({
    slug: z.string(),
    domain: z.string().optional().meta({ description: 'The custom domain asked about; absent for the default domain' }),
    available: z
      .boolean()
      .meta({ description: 'true: no link has this slug on this domain now (a link made meanwhile can still take it)' }),
    url: z
      .string()
      .meta({ description: 'The short URL a link with this slug on this domain has', example: 'https://go.example.com/spring-sale' }),
  })
  .meta({ id: 'SlugAvailability' });
export const slugAvailabilityResponseSchema = successEnvelope(slugAvailabilitySchema);
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
          ipadUrl: nullable(appUrlSchema),
          ipadBundleId: nullable(bundleIdSchema),
          ipadFallbackUrl: nullable(webUrlSchema),
          skipAppPage: nullable(z.boolean()),
        })
        .strict(),
    ),
    desktopUrl: nullable(webUrlSchema),
    customParameters: nullable(z.record(parameterName, parameterValue.nullable())),
    expirationDate: nullable(isoDateTimeOrDate('must be an ISO 8601 date or date-time')),
    tags: nullable(tagsSchema).meta({ description: 'Replaces the whole list of tags; null or [] removes them all', example: ['spring'] }),
    expiredUrl: nullable(webUrlSchema),
    socialPreview: nullable(
      z
        .object({
          title: socialPreviewSchema.shape.title.optional(),
          description: nullable(socialPreviewSchema.shape.description.unwrap()),
          imageUrl: nullable(webUrlSchema),
        })
        .strict(),
    ),
    clickCap: nullable(clickCapSchema).meta({
      description: 'A new cap (the clicks counted so far are kept); null removes it',
      example: 100,
    }),
    capOverflowUrl: nullable(capOverflowUrlSchema),
    password: nullable(linkPasswordSchema).meta({
      description: 'A new password for the link; null removes it (the link opens for everyone). Omitted: unchanged',
      example: 'spring-preview-2026',
    }),
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
    tags: z
      .array(z.string())
      .optional()
      .meta({ description: "The link's tags, lower-case; absent when it has none", example: ['spring'] }),
    expiredUrl: z.string().optional().meta({ description: 'Where the link sends visitors once it has expired' }),
    socialPreview: socialPreviewSchema.optional(),
    clickCap: z.number().int().optional().meta({ description: 'The click cap, when the link has one', example: 100 }),
    capOverflowUrl: z
      .string()
      .optional()
      .meta({ description: 'Where visitors go past the click cap', example: 'https://example.com/sold-out' }),
    domain: z.string().optional().meta({ description: 'The custom domain the link is on; absent on the default domain' }),
    passwordProtected: z
      .boolean()
      .meta({ description: 'true: visitors must enter the password set with `password` (never answered) first', example: false }),
    createdAt: timestampSchema,
    updatedAt: timestampSchema,
  })
  .meta({ id: 'Link' });
export type Link = z.infer<typeof linkSchema>;

export const linkSummarySchema = linkSchema
  .pick({ id: true, url: true, title: true, defaultUrl: true, createdAt: true, updatedAt: true })
  .meta({ id: 'LinkSummary' });
export type LinkSummary = z.infer<typeof linkSummarySchema>;

export const LINK_SORT_FIELDS = ['createdAt', 'updatedAt', 'title', 'defaultUrl', 'clicks'] as const;
export type LinkSortField = (typeof LINK_SORT_FIELDS)[number];

/** A query parameter given once or repeated (`?tag=a&tag=b`), each value also comma-separated: always a list. */
const listParameter = <T extends z.ZodType<unknown, string>>(item: T) =>
  z
    .union([z.string(), z.array(z.string())])
    .transform((value) =>
      (Array.isArray(value) ? value : [value]).flatMap((entry) => entry.split(',')).filter((entry) => entry.trim() !== ''),
    )
    .pipe(z.array(item));

/** What `include` can add to each item of the link list. */
export const LINK_LIST_EXTRAS = ['clicks', 'tags', 'expiry'] as const;
export type LinkListExtra = (typeof LINK_LIST_EXTRAS)[number];

/** `page` (from 1) and `limit` (1-`maxLimit`) of a paginated list's query, as every list takes them. */
export const pageQueryFields = (options: { maxLimit: number; defaultLimit: number; page: string; limit: string }) => ({
  page: z.coerce
    .number({ error: 'must be an integer' })
    .int('must be an integer')
    .min(1, 'must be at least 1')
    .default(1)
    .meta({ description: options.page, example: 1 }),
  limit: z.coerce
    .number({ error: 'must be an integer' })
    .int('must be an integer')
    .min(1, `must be between 1 and ${options.maxLimit}`)
    .max(options.maxLimit, `must be between 1 and ${options.maxLimit}`)
    .default(options.defaultLimit)
    .meta({ description: options.limit, example: options.defaultLimit }),
});

export const listLinksQuerySchema = z
  .object({
    ...pageQueryFields({
      maxLimit: 100,
      defaultLimit: 10,
      page: 'Page number, from 1; a page past the end is an empty list with the real totals',
      limit: 'Items per page, 1-100',
    }),
    sortBy: z
      .enum(LINK_SORT_FIELDS, { error: `must be one of ${LINK_SORT_FIELDS.join(', ')}` })
      .default('createdAt')
      .meta({ description: 'Field to sort by; ties are broken by id, so pages are stable', example: 'createdAt' }),
    sortDirection: z
      .enum(['asc', 'desc'], { error: 'must be asc or desc' })
      .default('desc')
      .meta({ description: 'Sort direction', example: 'desc' }),
    tag: listParameter(tagSchema)
      .refine((tags) => tags.length <= MAX_TAGS, `must name at most ${MAX_TAGS} tags`)
      .optional()
      .meta({
        description: 'Only links carrying this tag; repeat it (or separate with commas) to require several, all of which must match',
        example: 'spring',
      }),
    q: storableText()
      .trim()
      .max(200, 'must be at most 200 characters')
      .transform((text) => text || undefined)
      .optional()
      .meta({
        description: 'Case-insensitive search in the title, the default URL and the short code; empty means no search',
        example: 'sale',
      }),
    include: listParameter(z.enum(LINK_LIST_EXTRAS, { error: `must be one of ${LINK_LIST_EXTRAS.join(', ')}` }))
      .optional()
      .meta({
        description: 'Extra fields on each item, comma-separated: clicks (all-time clicks), tags (always an array)',
        example: 'clicks,tags',
      }),
  })
  .strict();
export type ListLinksQuery = z.infer<typeof listLinksQuerySchema>;

export const paginationSchema = z
  .object({ total: z.number().int(), page: z.number().int(), limit: z.number().int(), pages: z.number().int() })
  .meta({ id: 'Pagination' });
export type Pagination = z.infer<typeof paginationSchema>;

export const linkResponseSchema = successEnvelope(z.object({ link: linkSchema }));
/** A list item: SPEC's six fields, plus `clicks`, `tags` and `expirationDate` when `include` asks for them. */
export const linkListItemSchema = linkSummarySchema
  .extend({
    clicks: z.number().int().optional().meta({ description: 'All-time clicks (with include=clicks)', example: 320 }),
    tags: z
      .array(z.string())
      .optional()
      .meta({ description: "The link's tags, [] when none (with include=tags)", example: ['spring'] }),
    expirationDate: timestampSchema
      .optional()
      .meta({ description: 'When the link expires, for links with an expiry (with include=expiry)', example: '2026-12-31T23:59:00.000Z' }),
  })
  .meta({ id: 'LinkListItem' });
export type LinkListItem = z.infer<typeof linkListItemSchema>;

export const linkListResponseSchema = successEnvelope(z.object({ links: z.array(linkListItemSchema), pagination: paginationSchema }));

/** GET /tags: every tag of the caller's links with how many links carry it, by name. */
export const tagListResponseSchema = successEnvelope(
  z.object({
    tags: z.array(
      z
        .object({
          name: z.string().meta({ example: 'spring' }),
          links: z.number().int().meta({ description: "How many of the caller's links carry the tag", example: 12 }),
        })
        .meta({ id: 'TagCount' }),
    ),
  }),
);

/** Most links one bulk request may create or delete. */
export const MAX_BULK_LINKS = 100;

export const bulkCreateBodySchema = z
  .object({
    links: z
      .array(createLinkBodySchema)
      .min(1, 'must hold at least one link')
      .max(MAX_BULK_LINKS, `must hold at most ${MAX_BULK_LINKS} links`)
      .meta({
        description: `1-${MAX_BULK_LINKS} links, each as POST /links takes it; all are created in one transaction, or none`,
        example: [
          { title: 'Spring email', defaultUrl: 'https://example.com/spring', tags: ['spring'] },
          { title: 'Spring ad', defaultUrl: 'https://example.com/spring?ad=1', slug: 'spring-ad' },
        ],
      }),
  })
  .strict();
export type BulkCreateBody = z.input<typeof bulkCreateBodySchema>;
export const bulkCreateResponseSchema = successEnvelope(
  z.object({ links: z.array(linkSchema).meta({ description: 'The created links, in the order they were sent' }) }),
);

export const bulkDeleteBodySchema = z
  .object({
    ids: z
      .array(z.string().max(64))
      .min(1, 'must name at least one link')
      .max(MAX_BULK_LINKS, `must name at most ${MAX_BULK_LINKS} links`)
      .meta({
        description: `Ids of the caller's links to delete, 1-${MAX_BULK_LINKS}; ids that no longer exist are skipped`,
        example: ['6f1c2f44-7d7e-4c1e-9c55-0d7f4f3c8a10'],
      }),
  })
  .strict();
export type BulkDeleteBody = z.infer<typeof bulkDeleteBodySchema>;
export const bulkDeleteResponseSchema = successEnvelope(
  z.object({ deleted: z.number().int().meta({ description: 'How many links were deleted', example: 3 }) }),
);
