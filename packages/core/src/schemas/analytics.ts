import { z } from 'zod';
import { isoDateTimeOrDate, successEnvelope, timestampSchema } from './common.js';

export const TIME_BUCKETS = ['hour', 'day', 'week', 'month'] as const;
export type TimeBucket = (typeof TIME_BUCKETS)[number];

const dateParam = isoDateTimeOrDate('must be an ISO 8601 date (2026-11-01) or date-time (2026-11-01T10:00:00Z)').optional();

/**
 * Range and granularity of a link report. A bare date means the whole UTC day; endDate is
 * inclusive. Defaults: the last 30 days, by day. Semantic checks (start after end, too many
 * buckets) happen where the range is resolved.
 */
export const linkAnalyticsQuerySchema = z
  .object({
    startDate: dateParam,
    endDate: dateParam,
    timeBucket: z.enum(TIME_BUCKETS, { error: `must be one of ${TIME_BUCKETS.join(', ')}` }).default('day'),
  })
  .strict();
export type LinkAnalyticsQuery = z.infer<typeof linkAnalyticsQuerySchema>;

export const EXPORT_FORMATS = ['csv', 'json'] as const;
export const analyticsExportQuerySchema = linkAnalyticsQuerySchema
  .extend({ format: z.enum(EXPORT_FORMATS, { error: 'must be csv or json' }).default('csv') })
  .strict();
export type AnalyticsExportQuery = z.infer<typeof analyticsExportQuerySchema>;

const counts = (description: string) => z.record(z.string(), z.number().int()).meta({ description });

export const linkAnalyticsSchema = z
  .object({
    totalClicks: z.number().int().meta({ description: 'Non-bot clicks in the range' }),
    uniqueClicks: z.number().int().meta({ description: 'Distinct visitors in the range (HyperLogLog estimate, merged over the whole range)' }),
    previews: z.number().int().meta({ description: 'Visits of link-preview crawlers (Facebook, Slack, WhatsApp…) in the range; never counted as clicks' }),
    platforms: counts('android, ios, desktop'),
    countries: counts('ISO country codes: the top 10, the rest as Other; Unknown where the address has no country'),
    browsers: counts('Browser names: the top 10, the rest as Other'),
    devices: counts('Mobile, Desktop'),
    referrers: counts('Referring hosts: the top 10, the rest as Other; direct for visits without a referrer'),
    timeSeries: z
      .array(z.object({ date: timestampSchema, clicks: z.number().int() }))
      .meta({ description: 'One entry per bucket across the whole range, zero-filled; the clicks add up to totalClicks' }),
    range: z
      .object({ startDate: timestampSchema, endDate: timestampSchema, timeBucket: z.enum(TIME_BUCKETS) })
      .meta({ description: 'The resolved range: startDate inclusive, endDate exclusive' }),
  })
  .meta({ id: 'LinkAnalytics' });
export type LinkAnalytics = z.infer<typeof linkAnalyticsSchema>;

export const summaryAnalyticsSchema = z
  .object({
    totalLinks: z.number().int(),
    totalClicks: z.number().int(),
    activeLinks: z.number().int().meta({ description: 'Links without an expiry, or whose expiry is in the future' }),
    topLinks: z.array(z.object({ id: z.string(), title: z.string(), clicks: z.number().int() })).meta({ description: 'The 5 most-clicked links' }),
  })
  .meta({ id: 'SummaryAnalytics' });
export type SummaryAnalytics = z.infer<typeof summaryAnalyticsSchema>;

/** One row of an export: the clicks of one dimension value (or the bucket total) in one bucket. */
export const analyticsExportRowSchema = z
  .object({
    bucket: timestampSchema,
    dimension: z.string().meta({ description: 'total, platform, country, browser, os, device or referrer' }),
    value: z.string(),
    clicks: z.number().int(),
  })
  .meta({ id: 'AnalyticsExportRow' });
export type AnalyticsExportRow = z.infer<typeof analyticsExportRowSchema>;

export const linkAnalyticsResponseSchema = successEnvelope(z.object({ analytics: linkAnalyticsSchema }));
export const summaryAnalyticsResponseSchema = successEnvelope(z.object({ summary: summaryAnalyticsSchema }));
