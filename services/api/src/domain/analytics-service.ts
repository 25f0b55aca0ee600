import type { Readable } from 'node:stream';
import type {
  AccountExportQuery,
  AnalyticsExportQuery,
  LinkAnalytics,
  LinkAnalyticsQuery,
  SummaryAnalytics,
  SummaryAnalyticsQuery,
} from '@deeplink/core';
import {
  type AnalyticsFilter,
  APP_EVENT_NAMES,
  appEventsFollow,
  DIMENSION_NAMES,
  DIMENSIONS,
  filterOf,
  shortUrls,
  TOP_DIMENSION_NAMES,
  type TopDimensionName,
} from '@deeplink/core';
import type { AnalyticsRepository, LinkReportData, LinksRepository } from '@deeplink/core/db';
import {
  ACCOUNT_LONG_COLUMNS,
  EXPORT_CONTENT_TYPES,
  accountLongRecords,
  encodeExport,
  encodeRecords,
  startReading,
  wideLayout,
  type ExportFormat,
} from './analytics-export.js';
import type { ExportBudget } from './export-budget.js';
import { clockOf } from './time-zone.js';
import { bucketIsoStrings, resolveRange, type AnalyticsRange } from './analytics-range.js';
import type { Principal } from './auth-service.js';
import { findOwnedLink } from './owned-link.js';
import { appFunnel, noBucketEvents } from './app-funnel.js';
import { breakdownOf, breakdowns } from './breakdowns.js';

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
function timeSeries(
  range: AnalyticsRange,
  { series: clicks, uniqueSeries: uniques, appEventSeries }: LinkReportData,
): LinkAnalytics['timeSeries'] {
  const series = bucketIsoStrings(range.buckets).map((date) => ({ date, clicks: 0, uniqueClicks: 0, appEvents: noBucketEvents() }));
  for (const [start, count] of clicks) {
    const entry = series[bucketIndex(range.buckets, start)]!;
    entry.clicks += count;
    entry.uniqueClicks += uniques.get(start) ?? 0;
  }
  appEventSeries.starts.forEach((start, i) => {
    const { appEvents } = series[bucketIndex(range.buckets, start)]!;
    for (const name of APP_EVENT_NAMES) {
      appEvents[name] += appEventSeries[name][i]!;
      // Added as uniqueClicks is: a database bucket meets a range bucket of its own, but for a clock change's missing midnight.
      appEvents.uniques[name] += appEventSeries.uniques[name][i]!;
    }
  });
  return series;
}

/** Per-link reports, exports and the account summary, each checked against the caller. */
export function analyticsService(deps: {
  links: LinksRepository;
  /** The reports' and the summary's reads. */
  analytics: AnalyticsRepository;
  /** The exports' reads, on a pool of their own (DATABASE_EXPORT_POOL_MAX), so a slow download never holds a connection the reports need. */
  exportAnalytics: AnalyticsRepository;
  /** The limits every export runs under. */
  exportBudget: ExportBudget;
  /** Where short URLs live (SHORT_URL_BASE), for the wide export's short_url column. */
  shortUrlBase: string;
  /** The clock that places the default range; tests may fix it. */
  now?: () => Date;
}) {
  const now = deps.now ?? (() => new Date());
  const shortUrlOf = shortUrls(deps.shortUrlBase);

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

  const service = {
    /**
     * SPEC's Link analytics for one link, plus previews, every dimension's breakdown and the
     * resolved range; under filters, of the matching clicks only.
     */
    async linkReport(principal: Principal, id: string, query: LinkAnalyticsQuery): Promise<LinkAnalytics> {
      const { range, link } = await prepare(principal, id, query);
      const filter = filterOf(query);
      const report = await deps.analytics.linkReport(link.id, range, DIMENSION_NAMES, filter);
      return {
        totalClicks: report.totalClicks,
        uniqueClicks: report.uniqueClicks,
        previews: report.previews,
        ...breakdowns(report.dimensions),
        timeSeries: timeSeries(range, report),
        range: rangeOf(range),
        appEvents: appFunnel(report.dimensions, report.appEvents),
        appEventsFiltered: appEventsFollow(filter),
      };
    },

    /**
     * The caller's link counts, clicks and five most-clicked links, and every dimension's breakdown
     * when `breakdowns` is 'true': of one tag's links when `tag` is given, over a range when
     * startDate or endDate is (else all time), of the clicks matching the filters when there are any.
     */
    async summary(principal: Principal, query: Partial<SummaryAnalyticsQuery> = {}): Promise<SummaryAnalytics> {
      const { tag, startDate, endDate, timezone, breakdowns: withBreakdowns } = query;
      const clicks = filterOf(query);
      const appEventsFiltered = appEventsFollow(clicks);
      // Month buckets only so that any range resolves: the summary has no series.
      const range =
        startDate === undefined && endDate === undefined
          ? undefined
          : resolveRange({ startDate, endDate, timezone, timeBucket: 'month' }, now());
      // Breakdowns only when asked for: all time they read the account's whole history, row by value.
      if (withBreakdowns !== 'true') {
        const {
          dimensions: _none,
          appEvents: _noEvents,
          ...summary
        } = await deps.analytics.accountSummary(principal.userId, { tag, range, clicks });
        return { ...summary, appEventsFiltered };
      }
      const { dimensions, appEvents, ...summary } = await deps.analytics.accountSummary(
        principal.userId,
        { tag, range, clicks },
        DIMENSION_NAMES,
      );
      return { ...summary, ...breakdowns(dimensions), appEvents: appFunnel(dimensions, appEvents), appEventsFiltered };
    },

    /**
     * One link's counts as a CSV or JSON download: every bucket's total and per-dimension counts
     * (long, the default), or one row per bucket with the breakdowns as columns (wide).
     */
    async export(principal: Principal, id: string, query: AnalyticsExportQuery): Promise<AnalyticsExport> {
      const { range, link } = await prepare(principal, id, query);
      const filter = filterOf(query);
      return deps.exportBudget.open(principal.userId, async () => {
        if (query.layout === 'wide') {
          const name = `analytics-${link.title}-${rangeName(range)}-wide.${query.format}`;
          return wideExport([link], range, filter, query.format, name);
        }
        const rows = await startReading(deps.exportAnalytics.exportRows(link.id, range, filter));
        return {
          filename: `analytics-${link.title}-${rangeName(range)}.${query.format}`,
          contentType: EXPORT_CONTENT_TYPES[query.format],
          body: encodeExport(rows, query.format),
        };
      });
    },

    /** Every link of the caller (or of one tag) in one download, long or wide, read one link at a time. */
    async accountExport(principal: Principal, query: AccountExportQuery): Promise<AnalyticsExport> {
      const range = resolveRange(query, now());
      const filter = filterOf(query);
      return deps.exportBudget.open(principal.userId, async () => {
        const targets = await deps.links.exportTargets(principal.userId, query.tag);
        const name = `analytics-${query.tag ?? 'all-links'}-${rangeName(range)}-${query.layout}.${query.format}`;
        if (query.layout === 'wide') return wideExport(targets, range, filter, query.format, name);
        const rows = accountLongRecords(
          targets.map((target) => ({ id: target.id, rows: () => deps.exportAnalytics.exportRows(target.id, range, filter) })),
        );
        return {
          filename: name,
          contentType: EXPORT_CONTENT_TYPES[query.format],
          body: encodeRecords(ACCOUNT_LONG_COLUMNS, await startReading(rows), query.format),
        };
      });
    },
  };

  return service;

  /** `2026-03-01-to-2026-03-31-day`: the range's first and last local days and its bucket. */
  function rangeName(range: AnalyticsRange): string {
    const clock = clockOf(range.timezone);
    const localDay = (instant: number) => day(new Date(clock.toLocal(instant)));
    return `${localDay(range.start.getTime())}-to-${localDay(range.end.getTime() - 1)}-${range.timeBucket}`;
  }

  /**
   * The wide layout of `targets`: the top values of each open-ended dimension over all of them
   * become columns (one small aggregate query first), then each link's buckets are streamed
   * through a cursor.
   */
  async function wideExport(
    targets: { id: string; title: string; code: string; domain: string | null }[],
    range: AnalyticsRange,
    filter: AnalyticsFilter,
    format: ExportFormat,
    filename: string,
  ): Promise<AnalyticsExport> {
    const totals = await deps.exportAnalytics.dimensionTotals(
      targets.map((target) => target.id),
      range,
      TOP_DIMENSION_NAMES,
      filter,
    );
    // The values each column group names, in order of clicks, its rest label last (always present).
    const top = Object.fromEntries(
      TOP_DIMENSION_NAMES.map((name) => {
        const { rest } = DIMENSIONS[name].values;
        const counts = totals.filter((row) => row.dimension === name).map((row): [string, number] => [row.value, row.clicks]);
        return [name, [...Object.keys(breakdownOf(name, counts)).filter((value) => value !== rest), rest]];
      }),
    ) as Record<TopDimensionName, string[]>;
    const layout = wideLayout(top);
    async function* records() {
      for (const target of targets) {
        const link = { id: target.id, title: target.title, shortUrl: shortUrlOf(target.code, target.domain) };
        for await (const batch of deps.exportAnalytics.wideRows(target.id, range, filter)) {
          yield batch.map((bucket) => layout.record(link, bucket));
        }
      }
    }
    return {
      filename,
      contentType: EXPORT_CONTENT_TYPES[format],
      body: encodeRecords(layout.columns, await startReading(records()), format),
    };
  }
}
export type AnalyticsService = ReturnType<typeof analyticsService>;
