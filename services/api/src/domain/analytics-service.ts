import type { Readable } from 'node:stream';
import type { AnalyticsExportQuery, LinkAnalytics, LinkAnalyticsQuery, SummaryAnalytics, SummaryAnalyticsQuery } from '@deeplink/core';
import type { AnalyticsRepository, LinksRepository } from '@deeplink/core/db';
import { EXPORT_CONTENT_TYPES, encodeExport, startReading } from './analytics-export.js';
import { bucketIsoStrings, resolveRange, type AnalyticsRange } from './analytics-range.js';
import type { Principal } from './auth-service.js';
import { findOwnedLink } from './owned-link.js';
import { topN, withLabels } from './top-n.js';

/** Dimensions a link report breaks clicks down by (os is in the export only). */
const REPORT_DIMENSIONS = ['platform', 'country', 'browser', 'device', 'referrer'] as const;
type ReportDimension = (typeof REPORT_DIMENSIONS)[number];

/** An export ready to send: the body is produced while the client reads it. */
export interface AnalyticsExport {
  filename: string;
  contentType: string;
  body: Readable;
}

const day = (date: Date) => date.toISOString().slice(0, 10);

/** Index of the last of the ascending `starts` at or before `instant` (the bucket holding it). */
function bucketIndex(starts: readonly number[], instant: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (starts[middle]! <= instant) low = middle;
    else high = middle - 1;
  }
  return low;
}

/**
 * The zero-filled series of a range. Each bucket the database reported goes to the range's bucket
 * holding its start (the same instant, unless a zone's clock change makes the two calendars
 * resolve a missing local midnight differently), so no click is ever left out.
 */
function timeSeries(range: AnalyticsRange, clicks: Map<number, number>, uniques: Map<number, number>): LinkAnalytics['timeSeries'] {
  const series = bucketIsoStrings(range.buckets).map((date) => ({ date, clicks: 0, uniqueClicks: 0 }));
  for (const [start, count] of clicks) {
    const entry = series[bucketIndex(range.buckets, start)]!;
    entry.clicks += count;
    entry.uniqueClicks += uniques.get(start) ?? 0;
  }
  return series;
}

/** Per-link reports, exports and the account summary, each checked against the caller. */
export function analyticsService(deps: {
  links: LinksRepository;
  analytics: AnalyticsRepository;
  /** The clock that places the default range; tests may fix it. */
  now?: () => Date;
}) {
  const now = deps.now ?? (() => new Date());

  /** Validates the range first (it needs no database), then checks ownership. */
  const prepare = async (principal: Principal, id: string, query: LinkAnalyticsQuery) => {
    const range = resolveRange(query, now());
    const link = await findOwnedLink(deps.links, principal, id);
    return { range, link };
  };

  const rangeOf = ({ start, end, timeBucket }: AnalyticsRange): LinkAnalytics['range'] => ({
    startDate: start.toISOString(),
    endDate: end.toISOString(),
    timeBucket,
  });

  return {
    /** SPEC's Link analytics for one link, plus referrers and the resolved range. */
    async linkReport(principal: Principal, id: string, query: LinkAnalyticsQuery): Promise<LinkAnalytics> {
      const { range, link } = await prepare(principal, id, query);
      const report = await deps.analytics.linkReport(link.id, range, REPORT_DIMENSIONS);
      const counts = (dimension: ReportDimension) =>
        report.dimensions.filter((row) => row.dimension === dimension).map((row): [string, number] => [row.value, row.clicks]);
      return {
        totalClicks: report.totalClicks,
        uniqueClicks: report.uniqueClicks,
        previews: report.previews,
        platforms: withLabels(['android', 'ios', 'desktop'], counts('platform')),
        countries: topN(counts('country')),
        browsers: topN(counts('browser')),
        devices: withLabels(['Mobile', 'Desktop'], counts('device')),
        referrers: topN(counts('referrer')),
        timeSeries: timeSeries(range, report.series, report.uniqueSeries),
        range: rangeOf(range),
      };
    },

    /**
     * The caller's link counts, clicks and five most-clicked links: of one tag's links when
     * `tag` is given, over a range when startDate or endDate is (else all time).
     */
    async summary(principal: Principal, query: Partial<SummaryAnalyticsQuery> = {}): Promise<SummaryAnalytics> {
      const { tag, startDate, endDate, timezone } = query;
      // Month buckets only so that any range resolves: the summary has no series.
      const range = startDate === undefined && endDate === undefined ? undefined
        : resolveRange({ startDate, endDate, timezone, timeBucket: 'month' }, now());
      return deps.analytics.accountSummary(principal.userId, { tag, range });
    },

    /** Every bucket's total and per-dimension counts for one link, as a CSV or JSON download. */
    async export(principal: Principal, id: string, query: AnalyticsExportQuery): Promise<AnalyticsExport> {
      const { range, link } = await prepare(principal, id, query);
      const rows = await startReading(deps.analytics.exportRows(link.id, range));
      const lastDay = day(new Date(range.end.getTime() - 1));
      return {
        filename: `analytics-${link.id}-${day(range.start)}-to-${lastDay}-${range.timeBucket}.${query.format}`,
        contentType: EXPORT_CONTENT_TYPES[query.format],
        body: encodeExport(rows, query.format),
      };
    },
  };
}
export type AnalyticsService = ReturnType<typeof analyticsService>;
