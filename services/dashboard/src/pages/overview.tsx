import type { AccountExportQuery, SummaryAnalytics, SummaryAnalyticsQuery } from '@deeplink/client';
import type { BreakdownKey } from '@deeplink/core/dimensions';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { Breakdown } from '../components/breakdown.js';
import { AppLink, ChartCard, errorText } from '../components/common.js';
import { FilterChips } from '../components/filter-chips.js';
import { LivePanel } from '../components/live-panel.js';
import { Skeleton } from '../components/loading.js';
import { ReportBreakdowns } from '../components/report-breakdowns.js';
import { AppEventsNote, LoadState } from '../components/report-state.js';
import { TimeChart } from '../components/time-chart.js';
import { accountDailyClicks, breakdownRows, bucketLabel, seriesData } from '../lib/chart-data.js';
import { type Filter, type Filtered, filterQuery, filterSearch, parseFilters } from '../lib/filters.js';
import { eventTotal } from '../lib/funnel.js';
import { defaultTimeZone, localDay } from '../lib/ranges.js';
import { withQuery } from '../lib/report-view.js';
import { navigate, useLocation } from '../lib/router.js';
import { api } from '../lib/session.js';

const numberFormat = new Intl.NumberFormat(undefined);

/** The breakdowns of a summary asked for with breakdowns=true. */
const hasBreakdowns = (summary: SummaryAnalytics): summary is SummaryAnalytics & Record<BreakdownKey, Record<string, number>> =>
  summary.platforms !== undefined;

/**
 * The account at a glance: all-time totals, the top links, and clicks by day, installs and app
 * opens and every breakdown over the last 30 days (today included) in the browser's time zone.
 * Choosing a breakdown's row filters it all (the filters are in the address, as on a link's page);
 * choosing a top link opens its page under the same filters.
 */
export function OverviewPage() {
  const { path, query } = useLocation();
  const filters = useMemo(() => parseFilters(query), [query.toString()]);
  const filterParams = filterQuery(filters);
  const [summary, setSummary] = useState<SummaryAnalytics>();
  const [recent, setRecent] = useState<SummaryAnalytics>();
  const [daily, setDaily] = useState<{ date: string; clicks: number }[]>();
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string>();
  const [attempt, setAttempt] = useState(0);
  const timeZone = useMemo(() => defaultTimeZone(new Date()), []);
  useEffect(() => {
    const controller = new AbortController();
    const options = { signal: controller.signal };
    const today = new Date();
    const last30Days = { startDate: localDay(new Date(today.getTime() - 29 * 86_400_000)), endDate: localDay(today), timezone: timeZone };
    setError(undefined);
    setLoading(true);
    // With the breakdowns, for the app funnel's installs and opens: bounded by the 30 days, so it stays cheap.
    const lastMonth: Filtered<SummaryAnalyticsQuery> = { ...last30Days, breakdowns: 'true', ...filterParams };
    const days: Filtered<AccountExportQuery> = { ...last30Days, timeBucket: 'day', ...filterParams };
    // An answer for a view left meanwhile is dropped.
    const current =
      <T,>(set: (value: T) => void) =>
      (value: T) => {
        if (!controller.signal.aborted) set(value);
      };
    Promise.all([
      // Never filtered: a filtered read scans every combination of its range, and all time on a large
      // account is the costliest read there is. Under filters the page's clicks are its 30 days'.
      api.analytics.summary({}, options).then(current(setSummary)),
      api.analytics.summary(lastMonth, options).then(current(setRecent)),
      api.analytics
        .export({ ...days, format: 'json', layout: 'wide' }, options)
        .then((rows) => current(setDaily)(accountDailyClicks(rows))),
    ])
      .then(current(() => setLoading(false)))
      .catch((caught) => {
        if (controller.signal.aborted) return;
        // No numbers rather than some of another view's.
        setSummary(undefined);
        setRecent(undefined);
        setDaily(undefined);
        setError(errorText(caught));
        setLoading(false);
      });
    return () => controller.abort();
  }, [JSON.stringify(filterParams), attempt]);
  const data = useMemo(() => daily && seriesData(daily), [daily]);
  const filterBy = (next: Filter[]) => navigate(withQuery(path, filterSearch(next)));

  const head = (
    <>
      <h1>Overview</h1>
      <FilterChips filters={filters} onChange={filterBy} />
      <LoadState loading={loading} error={error} onRetry={() => setAttempt(attempt + 1)} />
    </>
  );
  if (!summary)
    return (
      <section aria-busy={loading}>
        {head}
        {loading && <Skeleton kind="totals" lines={7} />}
      </section>
    );
  const filtered = filters.length > 0;
  // Under filters, the top links of the matching clicks of the 30 days. Keyed by id: two links may share a title.
  const topLinks = (filtered ? recent?.topLinks : summary.topLinks) ?? [];
  const titles = new Map(topLinks.map((link) => [link.id, link.title]));
  const top = breakdownRows(Object.fromEntries(topLinks.map((link) => [link.id, link.clicks])), (id) => titles.get(id) ?? id);
  const totals: [string, number | undefined][] = [
    ['Total links', summary.totalLinks],
    ...(filtered ? [] : [['Total clicks', summary.totalClicks] as [string, number]]),
    ['Active links', summary.activeLinks],
    ['Clicks, last 30 days', recent?.totalClicks],
    ['Installs, last 30 days', eventTotal(recent?.appEvents, 'APP_INSTALL')],
    ['First opens, last 30 days', eventTotal(recent?.appEvents, 'APP_FIRST_OPEN')],
    ['Re-opens, last 30 days', eventTotal(recent?.appEvents, 'APP_RE_OPEN')],
  ];
  return (
    <section aria-busy={loading}>
      {head}
      <div class={loading ? 'stale' : undefined}>
        <dl class="totals">
          {totals.map(([label, value]) => (
            <div class="card total" key={label}>
              <dt class="total-label">{label}</dt>
              <dd class="total-value">{value === undefined ? '…' : numberFormat.format(value)}</dd>
            </div>
          ))}
        </dl>
        {summary.totalLinks === 0 && (
          <div class="empty card">
            <h2>Start with a link</h2>
            <p>Create a short link, share it, and its clicks show up here.</p>
            <AppLink href="/links/new" class="button">
              Create your first link
            </AppLink>
          </div>
        )}
        {summary.totalLinks > 0 && <LivePanel path="/analytics/live" scope="Every link's clicks" filtered={filters.length > 0} />}
        {data && daily && daily.length > 0 && (
          <ChartCard
            title="Clicks, last 30 days"
            chart={
              <TimeChart
                data={data.slice(0, 2)}
                labels={['Clicks']}
                timeZone={timeZone}
                formatTime={(seconds) => bucketLabel(new Date(seconds * 1000).toISOString(), 'day', timeZone)}
              />
            }
            table={() => (
              <table>
                <thead>
                  <tr>
                    <th scope="col">Day ({timeZone})</th>
                    <th scope="col" class="num">
                      Clicks
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {daily.map((point) => (
                    <tr key={point.date}>
                      <th scope="row">{bucketLabel(point.date, 'day', timeZone)}</th>
                      <td class="num">{point.clicks}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          />
        )}
        {recent && <AppEventsNote report={recent} />}
        {top.length > 0 && (
          <Breakdown
            title={filtered ? 'Top links, last 30 days' : 'Top links'}
            dimension="Link"
            rows={top}
            choice={{
              describe: () => 'Open',
              choose: (row) => navigate(withQuery(`/links/${encodeURIComponent(row.key)}`, filterSearch(filters))),
            }}
          />
        )}
        {recent && hasBreakdowns(recent) && (
          <>
            <h2 class="section-title">Last 30 days by dimension</h2>
            <ReportBreakdowns report={recent} filters={filters} onFilter={filterBy} empty="No clicks in the last 30 days." />
          </>
        )}
      </div>
    </section>
  );
}
