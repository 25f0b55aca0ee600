import type { SummaryAnalytics } from '@deeplink/client';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { Breakdown } from '../components/breakdown.js';
import { AppLink, ChartCard, errorText, Notice } from '../components/common.js';
import { TimeChart } from '../components/time-chart.js';
import { accountDailyClicks, breakdownRows, bucketLabel, seriesData } from '../lib/chart-data.js';
import { eventTotal } from '../lib/funnel.js';
import { defaultTimeZone, localDay } from '../lib/ranges.js';
import { api } from '../lib/session.js';

const numberFormat = new Intl.NumberFormat('en');

/**
 * The account at a glance: all-time totals, the top links, and clicks by day, installs and app
 * opens over the last 30 days (today included) in the browser's time zone.
 */
export function OverviewPage() {
  const [summary, setSummary] = useState<SummaryAnalytics>();
  const [recent, setRecent] = useState<SummaryAnalytics>();
  const [daily, setDaily] = useState<{ date: string; clicks: number }[]>();
  const [error, setError] = useState<string>();
  const timeZone = useMemo(() => defaultTimeZone(new Date()), []);
  useEffect(() => {
    const today = new Date();
    const last30Days = { startDate: localDay(new Date(today.getTime() - 29 * 86_400_000)), endDate: localDay(today), timezone: timeZone };
    const failed = (caught: unknown) => setError(errorText(caught));
    api.analytics.summary().then(setSummary).catch(failed);
    // With the breakdowns, for the app funnel's installs and opens: bounded by the 30 days, so it stays cheap.
    api.analytics
      .summary({ ...last30Days, breakdowns: 'true' })
      .then(setRecent)
      .catch(failed);
    api.analytics
      .export({ ...last30Days, timeBucket: 'day', format: 'json', layout: 'wide' })
      .then((rows) => setDaily(accountDailyClicks(rows)))
      .catch(failed);
  }, []);
  const data = useMemo(() => daily && seriesData(daily), [daily]);

  if (error) return <Notice>{error}</Notice>;
  if (!summary) return <p class="muted">Loading…</p>;
  // Keyed by id: two links may share a title.
  const titles = new Map(summary.topLinks.map((link) => [link.id, link.title]));
  const top = breakdownRows(Object.fromEntries(summary.topLinks.map((link) => [link.id, link.clicks])), (id) => titles.get(id) ?? id);
  const totals: [string, number | undefined][] = [
    ['Total links', summary.totalLinks],
    ['Total clicks', summary.totalClicks],
    ['Active links', summary.activeLinks],
    ['Clicks, last 30 days', recent?.totalClicks],
    ['Installs, last 30 days', eventTotal(recent?.appEvents, 'APP_INSTALL')],
    ['First opens, last 30 days', eventTotal(recent?.appEvents, 'APP_FIRST_OPEN')],
    ['Re-opens, last 30 days', eventTotal(recent?.appEvents, 'APP_RE_OPEN')],
  ];
  return (
    <section>
      <h1>Overview</h1>
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
      {top.length > 0 && <Breakdown title="Top links" dimension="Link" rows={top} />}
    </section>
  );
}
