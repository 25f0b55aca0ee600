import { z } from 'zod';
import { type BreakdownKey, DIMENSION_NAMES, DIMENSIONS, type DimensionSpec, TOP_DIMENSION_NAMES } from '../analytics/dimensions.js';
import {
  FILTER_PARAMETERS,
  type FilterParameter,
  MAX_FILTER_VALUE_LENGTH,
  MAX_FILTER_VALUES,
  parseFilterValues,
} from '../analytics/filters.js';
import { APP_EVENT_NAMES, APP_EVENT_PLATFORMS } from '../queue/app-events.js';
import { isoDateTimeOrDate, successEnvelope, timestampSchema } from './common.js';
import { tagSchema } from './links.js';

export const TIME_BUCKETS = ['hour', 'day', 'week', 'month'] as const;
export type TimeBucket = (typeof TIME_BUCKETS)[number];

const dateParam = (description: string, example: string) =>
  isoDateTimeOrDate('must be an ISO 8601 date (2026-11-01) or date-time (2026-11-01T10:00:00Z)').optional().meta({ description, example });

/** True when the runtime knows `name` as an IANA time zone (fixed offsets such as +02:00 are not names). */
export const isTimeZoneName = (name: string): boolean => {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
};

/** An IANA time zone name; UTC when absent. */
export const timezoneParam = z
  .string()
  .refine(isTimeZoneName, 'must be an IANA time zone name such as Europe/Paris or America/New_York')
  .default('UTC')
  .meta({
    description:
      'IANA time zone: day, week and month buckets start at its local midnight (a day may last 23 or 25 hours around a DST change) ' +
      'and bare dates in startDate/endDate are its local dates; timeSeries dates stay UTC instants. Zones a whole number of hours ' +
      'from UTC only (Asia/Kolkata, UTC+05:30, is refused with 400): clicks are counted per UTC hour',
    example: 'Europe/Paris',
  });

const timeBucketParam = z
  .enum(TIME_BUCKETS, { error: `must be one of ${TIME_BUCKETS.join(', ')}` })
  .default('day')
  .meta({ description: 'Granularity of timeSeries (and of export rows): hour, day, week (ISO, from Monday) or month', example: 'day' });

/** The range parameters every analytics request shares. */
const rangeParams = {
  startDate: dateParam(
    'First day (a bare date: from its local midnight) or instant of the range, inclusive; default: 30 days before the end of the range',
    '2026-03-01',
  ),
  endDate: dateParam('Last day of the range, included whole, or an instant, included; default today', '2026-03-31'),
  timeBucket: timeBucketParam,
  timezone: timezoneParam,
};

/** What each dimension's filter values look like, for the parameters' descriptions and examples. */
const FILTER_EXAMPLES: Record<(typeof DIMENSION_NAMES)[number], { values: string; example: string; negatedExample: string }> = {
  platform: { values: 'Android, iOS or Desktop (android, ios, desktop too; any case)', example: 'iOS', negatedExample: 'Desktop' },
  device: { values: 'Mobile or Desktop (any case)', example: 'Mobile', negatedExample: 'Desktop' },
  country: { values: 'an ISO country code (any case) or Unknown', example: 'DE', negatedExample: 'US' },
  browser: {
    values: 'a browser name as the browsers breakdown shows it (Chrome, Mobile Safari…)',
    example: 'Chrome',
    negatedExample: 'Firefox',
  },
  os: {
    values: 'an operating system name as the os breakdown shows it (Android, iOS, Windows…)',
    example: 'iOS',
    negatedExample: 'Windows',
  },
  referrer: {
    values: 'a referring host as the referrers breakdown shows it (any case), or direct',
    example: 't.co',
    negatedExample: 'direct',
  },
};

/** One filter parameter: given once or repeated, each value checked and turned into its stored form. */
const filterParam = (parameter: FilterParameter, dimension: (typeof DIMENSION_NAMES)[number], negated: boolean) => {
  const { values, example, negatedExample } = FILTER_EXAMPLES[dimension];
  return z
    .union([z.string(), z.array(z.string())])
    .transform((given, ctx) => {
      const parsed = parseFilterValues(dimension, given);
      if ('values' in parsed) return parsed.values;
      ctx.issues.push({ code: 'custom', message: parsed.error, input: given });
      return z.NEVER;
    })
    .optional()
    .meta({
      description:
        `Only clicks whose ${dimension} is ${negated ? 'none' : 'one'} of these: ${values}. ` +
        `Repeat it for several (${parameter}=a&${parameter}=b), at most ${MAX_FILTER_VALUES} values of at most ${MAX_FILTER_VALUE_LENGTH} characters; ` +
        'Other is refused. Different filter parameters must all match',
      example: negated ? negatedExample : example,
    });
};

/**
 * The filter parameters every analytics read takes: `<dimension>` (any of its values) and
 * `not<Dimension>` (none of them) for each dimension of the registry. Parsed values are in stored
 * form; `filterOf` gathers them into a filter.
 */
const filterParams = Object.fromEntries(
  FILTER_PARAMETERS.map(({ parameter, dimension, negated }) => [parameter, filterParam(parameter, dimension, negated)]),
) as Record<FilterParameter, ReturnType<typeof filterParam>>;

/**
 * Range and granularity of a link report. A bare date means the whole day in `timezone` (UTC by
 * default); endDate is inclusive. Defaults: the last 30 days, by day. Semantic checks (start after
 * end, too many buckets, a zone off the whole hour) happen where the range is resolved.
 */
export const linkAnalyticsQuerySchema = z.object({ ...rangeParams, ...filterParams }).strict();
export type LinkAnalyticsQuery = z.infer<typeof linkAnalyticsQuerySchema>;

/**
 * The account summary's filters: a tag, and a range. Without startDate and endDate the summary is
 * all-time, as SPEC defines it; with either, its clicks are those of the range.
 */
export const summaryAnalyticsQuerySchema = z
  .object({
    tag: tagSchema
      .optional()
      .meta({ description: 'Only the links carrying this tag (links, clicks and top links alike)', example: 'spring' }),
    startDate: dateParam(
      'Count clicks from this day (its local midnight) or instant on; without startDate and endDate, all time',
      '2026-03-01',
    ),
    endDate: dateParam('Count clicks up to this day, included whole, or instant; default today when startDate is given', '2026-03-31'),
    timezone: timezoneParam,
    breakdowns: z
      .enum(['true', 'false'], { error: 'must be true or false' })
      .default('false')
      .meta({
        description:
          "true: add every dimension's breakdown (platforms, countries, browsers, os, devices, referrers) over the same clicks. " +
          "It reads a row per link, day and value of the range (all time: of the account's whole history), so it costs far more " +
          'than the totals on a large account',
        example: 'true',
      }),
    ...filterParams,
  })
  .strict();
export type SummaryAnalyticsQuery = z.infer<typeof summaryAnalyticsQuerySchema>;

/** The wide export's columns of the dimensions with fixed values (platform, device), in registry order. */
const wideFixedColumns = () =>
  DIMENSION_NAMES.flatMap((name) => {
    const spec: DimensionSpec = DIMENSIONS[name];
    if (spec.values.kind !== 'fixed') return [];
    return Object.entries(spec.values.values).map(([value, { wideColumn }]) => [wideColumn, `Clicks with ${name} ${value}`] as const);
  });

/** The wide export's columns, in order, before those named after the top values. */
export const WIDE_FIXED_COLUMNS = [
  'link_id',
  'title',
  'short_url',
  'bucket_start',
  'clicks',
  'unique_clicks',
  ...wideFixedColumns().map(([column]) => column),
] as const;

/**
 * The wide export's app event columns, after the fixed ones: each event on each platform
 * (`redirect_android`, `app_install_ios`, `app_first_open_desktop`, `app_re_open_other`…), in the
 * order of APP_EVENT_NAMES, then APP_EVENT_PLATFORMS.
 */
export const WIDE_APP_EVENT_COLUMNS = APP_EVENT_NAMES.flatMap((event) =>
  APP_EVENT_PLATFORMS.map((platform) => ({ event, platform, column: `${event.toLowerCase()}_${platform.toLowerCase()}` })),
);

const topSpecs = TOP_DIMENSION_NAMES.map((name) => DIMENSIONS[name]);
const WIDE_TOP_COLUMNS = topSpecs.map(({ values }) => `${values.widePrefix}<value>`).join(', ');
const WIDE_REST_COLUMNS = topSpecs.map(({ values }) => `${values.widePrefix}${values.rest}`).join(', ');

export const EXPORT_FORMATS = ['csv', 'json'] as const;
export const EXPORT_LAYOUTS = ['long', 'wide'] as const;
export type ExportLayout = (typeof EXPORT_LAYOUTS)[number];

export const analyticsExportQuerySchema = linkAnalyticsQuerySchema
  .extend({
    format: z.enum(EXPORT_FORMATS, { error: 'must be csv or json' }).default('csv').meta({
      description: 'csv (RFC 4180, CRLF, a header row) or json (an array of objects keyed by the same column names)',
      example: 'csv',
    }),
    layout: z
      .enum(EXPORT_LAYOUTS, { error: 'must be long or wide' })
      .default('long')
      .meta({
        description:
          'long: one row per bucket and dimension value (bucket, dimension, value, clicks), then per app event and platform ' +
          '(dimension the event, value the platform, clicks the count). wide: one row per link and bucket ' +
          `(${WIDE_FIXED_COLUMNS.join(', ')}, then the app events per platform (${WIDE_APP_EVENT_COLUMNS[0]!.column}, …, ` +
          `${WIDE_APP_EVENT_COLUMNS.at(-1)!.column}), then ${WIDE_TOP_COLUMNS} columns for the top 10 of the whole export, ` +
          `with ${WIDE_REST_COLUMNS} holding the rest)`,
        example: 'wide',
      }),
  })
  .strict();

/** The account-wide export: every link of the caller, or those carrying `tag`. */
export const accountExportQuerySchema = analyticsExportQuerySchema
  .extend({ tag: tagSchema.optional().meta({ description: 'Only the links carrying this tag', example: 'spring' }) })
  .strict();
export type AccountExportQuery = z.infer<typeof accountExportQuerySchema>;
export type AnalyticsExportQuery = z.infer<typeof analyticsExportQuerySchema>;

/** How a breakdown lists its values, for its description. */
const listing = ({ values }: DimensionSpec) =>
  values.kind === 'fixed'
    ? 'Each value always present, 0 when it had no clicks'
    : `The top ${values.limit}, the rest added up as ${values.rest}`;

/** One schema per dimension of the registry, under its response key: value label → clicks. */
const breakdownSchemas = (scope: string) =>
  Object.fromEntries(
    DIMENSION_NAMES.map((name) => {
      const spec: DimensionSpec = DIMENSIONS[name];
      const description = `${spec.description}. ${listing(spec)}; clicks ${scope}, adding up to totalClicks`;
      return [spec.response, z.record(z.string(), z.number().int()).meta({ description })];
    }),
  ) as Record<BreakdownKey, z.ZodRecord<z.ZodString, z.ZodNumber>>;

/** The breakdowns a summary carries when asked for (breakdowns=true). */
const optionalBreakdownSchemas = () =>
  Object.fromEntries(
    Object.entries(breakdownSchemas('over the same links and clicks as totalClicks; only with breakdowns=true')).map(([key, schema]) => [
      key,
      schema.optional(),
    ]),
  ) as Record<BreakdownKey, z.ZodOptional<z.ZodRecord<z.ZodString, z.ZodNumber>>>;

/** Counts of one kind of event (or of clicks) per platform; every platform always present. */
const perPlatformSchema = (what: string) =>
  z
    .object({ ANDROID: z.number().int(), IOS: z.number().int(), DESKTOP: z.number().int(), OTHER: z.number().int() })
    .meta({ description: `${what}, per platform` });

/** A conversion rate between two counts: null when the first is 0. */
const rateSchema = (description: string) =>
  z
    .number()
    .nullable()
    .meta({ description: `${description}; null when there is nothing to divide by` });

/** Whether a report's app events follow its filters. */
const appEventsFilteredSchema = z.boolean().meta({
  description:
    "true when the app events (appEvents and each bucket's) count only what the filters select: without filters, or with filters on " +
    'the platform alone (app events carry a platform and nothing else). false when a filter names another dimension: the app ' +
    'events are then those of every click, unfiltered',
  example: true,
});

/** The app funnel of a report: clicks, store redirects, installs and opens, per platform, and the rates between them. */
export const appEventsSchema = z
  .object({
    counts: z.object({
      CLICK: perPlatformSchema('Clicks (the platforms breakdown; OTHER is always 0: every click is routed as android, ios or desktop)'),
      REDIRECT: perPlatformSchema('Clicks whose answer sent a visitor without the app on to an app store (Play Store, App Store, market:)'),
      APP_INSTALL: perPlatformSchema('Installs reported through the link (no source reports them yet: 0)'),
      APP_FIRST_OPEN: perPlatformSchema('First launches after install that an app reported (POST /api/app/open, firstLaunch true)'),
      APP_RE_OPEN: perPlatformSchema('Later launches that an app reported (POST /api/app/open, firstLaunch false or absent)'),
    }),
    conversion: z
      .object({
        redirectPerClick: rateSchema('REDIRECT / CLICK over all platforms'),
        installPerRedirect: rateSchema('APP_INSTALL / REDIRECT'),
        firstOpenPerInstall: rateSchema('APP_FIRST_OPEN / APP_INSTALL'),
        firstOpenPerClick: rateSchema('APP_FIRST_OPEN / CLICK: the whole funnel, installs reported or not'),
      })
      .meta({ description: 'The funnel click → store redirect → install → first open; re-opens are not part of it' }),
    uniques: z
      .object({
        REDIRECT: perPlatformSchema('Distinct visitors sent on to an app store (a visitor as in uniqueClicks: address + User-Agent)'),
        APP_INSTALL: perPlatformSchema('Distinct installs matched to the link (an install is the app and its installId)'),
        APP_FIRST_OPEN: perPlatformSchema(
          'Distinct installs that reported a first launch, or distinct opens for apps that name no installId',
        ),
        APP_RE_OPEN: perPlatformSchema(
          'Distinct installs that reported later launches (the installId sent with each open), or distinct opens (openId) for opens that name none',
        ),
      })
      .meta({
        description:
          'Distinct visitors, installs or opens behind each event (HyperLogLog estimates, merged over the whole range and, in the summary, over the links: one install counts once however often it opens)',
      }),
  })
  .meta({ id: 'AppEvents', description: 'App events over the range (the same range, links and zone as the clicks)' });
export type AppEvents = z.infer<typeof appEventsSchema>;

/** One number per app event. */
const perEventSchema = () =>
  Object.fromEntries(APP_EVENT_NAMES.map((event) => [event, z.number().int()])) as Record<(typeof APP_EVENT_NAMES)[number], z.ZodNumber>;

/** The app events of one time series bucket: each event's count over every platform, and its distinct visitors. */
const bucketAppEventsSchema = z
  .object({
    ...perEventSchema(),
    uniques: z.object(perEventSchema()).meta({
      description:
        "Distinct visitors, installs or opens behind each event in the bucket, every platform together: the bucket's sketches merged " +
        '(HyperLogLog estimate, exact up to 160), as uniqueClicks is for the clicks',
    }),
  })
  .meta({
    id: 'BucketAppEvents',
    description:
      'App events in the bucket, each summed over every platform (the per-platform counts of the whole range are in appEvents; ' +
      'per platform and bucket, in the export). Every event always present, 0 when it had none',
    example: {
      REDIRECT: 12,
      APP_INSTALL: 5,
      APP_FIRST_OPEN: 4,
      APP_RE_OPEN: 9,
      uniques: { REDIRECT: 10, APP_INSTALL: 5, APP_FIRST_OPEN: 4, APP_RE_OPEN: 3 },
    },
  });

export const linkAnalyticsSchema = z
  .object({
    totalClicks: z.number().int().meta({ description: 'Non-bot clicks in the range; under filters, those that match them all' }),
    uniqueClicks: z
      .number()
      .int()
      .meta({ description: 'Distinct visitors in the range (HyperLogLog estimate, merged over the whole range)' }),
    previews: z
      .number()
      .int()
      .meta({ description: 'Visits of link-preview crawlers (Facebook, Slack, WhatsApp…) in the range; never counted as clicks' }),
    ...breakdownSchemas('in the range'),
    timeSeries: z
      .array(
        z.object({
          date: timestampSchema.meta({
            description: "Start of the bucket, a UTC instant (local midnight of the range's timezone for day, week and month)",
          }),
          clicks: z.number().int().meta({ description: 'Clicks in the bucket', example: 42 }),
          uniqueClicks: z.number().int().meta({
            description: "Distinct visitors in the bucket: the bucket's hourly sketches merged (HyperLogLog estimate, at most clicks)",
            example: 30,
          }),
          appEvents: bucketAppEventsSchema,
        }),
      )
      .meta({ description: 'One entry per bucket across the whole range, zero-filled; the clicks add up to totalClicks' }),
    range: z
      .object({ startDate: timestampSchema, endDate: timestampSchema, timeBucket: z.enum(TIME_BUCKETS) })
      .meta({ description: 'The resolved range: startDate inclusive, endDate exclusive' }),
    appEvents: appEventsSchema,
    appEventsFiltered: appEventsFilteredSchema,
  })
  .meta({ id: 'LinkAnalytics' });
export type LinkAnalytics = z.infer<typeof linkAnalyticsSchema>;

export const summaryAnalyticsSchema = z
  .object({
    totalLinks: z.number().int(),
    totalClicks: z
      .number()
      .int()
      .meta({ description: 'Clicks on those links (all time or in the range); under filters, those that match them all' }),
    activeLinks: z.number().int().meta({ description: 'Links without an expiry, or whose expiry is in the future' }),
    topLinks: z
      .array(z.object({ id: z.string(), title: z.string(), clicks: z.number().int() }))
      .meta({ description: 'The 5 most-clicked links' }),
    ...optionalBreakdownSchemas(),
    appEvents: appEventsSchema.optional().meta({ description: 'The app funnel of the same links and range; only with breakdowns=true' }),
    appEventsFiltered: appEventsFilteredSchema,
  })
  .meta({ id: 'SummaryAnalytics' });
export type SummaryAnalytics = z.infer<typeof summaryAnalyticsSchema>;

/** One row of an export: the clicks of one dimension value (or the bucket total) in one bucket. */
export const analyticsExportRowSchema = z
  .object({
    bucket: timestampSchema,
    dimension: z
      .string()
      .meta({ description: `${['total', ...DIMENSION_NAMES].join(', ')}, or an app event (${APP_EVENT_NAMES.join(', ')})` }),
    value: z.string().meta({ description: `The dimension's value; for an app event, its platform (${APP_EVENT_PLATFORMS.join(', ')})` }),
    clicks: z.number().int().meta({ description: 'Clicks; for an app event, how many of those events' }),
  })
  .meta({ id: 'AnalyticsExportRow' });
export type AnalyticsExportRow = z.infer<typeof analyticsExportRowSchema>;

/** One row of the account-wide long export: a per-link row led by its link's id. */
export const analyticsAccountExportRowSchema = z
  .object({ link_id: z.string(), ...analyticsExportRowSchema.shape })
  .meta({ id: 'AnalyticsAccountExportRow' });

const wideCount = (description: string) => z.number().int().meta({ description });

/**
 * One row of a wide export (layout=wide): one link in one bucket. The top values of the open-ended
 * dimensions (country, browser, os, referrer) of the whole export follow as columns of their own,
 * so their names depend on the data.
 */
export const analyticsWideExportRowSchema = z
  .object({
    link_id: z.string(),
    title: z.string(),
    short_url: z.string(),
    bucket_start: timestampSchema,
    clicks: wideCount('Clicks in the bucket'),
    unique_clicks: wideCount('Distinct visitors in the bucket (HyperLogLog estimate)'),
    ...(Object.fromEntries(wideFixedColumns().map(([column, description]) => [column, wideCount(description)])) as Record<
      string,
      z.ZodNumber
    >),
    ...(Object.fromEntries(
      WIDE_APP_EVENT_COLUMNS.map(({ event, platform, column }) => [column, wideCount(`${event} events on ${platform} in the bucket`)]),
    ) as Record<string, z.ZodNumber>),
  })
  .catchall(z.number().int())
  .meta({
    id: 'AnalyticsWideExportRow',
    description:
      `Then ${WIDE_TOP_COLUMNS} columns (integers) for the top 10 of the whole export, and ${WIDE_REST_COLUMNS} ` +
      'for the rest: each group adds up to clicks',
  });

export const linkAnalyticsResponseSchema = successEnvelope(z.object({ analytics: linkAnalyticsSchema }));
export const summaryAnalyticsResponseSchema = successEnvelope(z.object({ summary: summaryAnalyticsSchema }));
