import type { LinkAnalytics, SummaryAnalytics } from '@deeplink/client';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { Breakdown } from '../components/breakdown.js';
import { AppLink, ChartCard, errorText, Notice } from '../components/common.js';
import { TimeChart } from '../components/time-chart.js';
import { breakdownRows, bucketLabel, seriesData } from '../lib/chart-data.js';
import { rangeQuery, resolveRange } from '../lib/ranges.js';
import { api } from '../lib/session.js';

const numberFormat = new Intl.NumberFormat('en');
type DailyClicks = Pick<LinkAnalytics['timeSeries'][number], 'date' | 'clicks'>;

/** Links whose daily series are added up for the account's last 30 days. */
const SERIES_LINKS = 100;

/**
 * The account at a glance: totals, the top links, and clicks by day over the last 30 days (the
 * sum of the links' own series, the most clicked 100 of them, until the API reports it for the account).
 */
export function OverviewPage() {
  const [summary, setSummary] = useState<SummaryAnalytics>();
  const [daily, setDaily] = useState<DailyClicks[]>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    api.analytics.summary().then(setSummary).catch((caught) => setError(errorText(caught)));
    const range = resolveRange('30d', new Date());
    api.links.list({ limit: SERIES_LINKS, include: 'clicks' })
      .then(async ({ links }) => {
        const reports = await Promise.all(links.map((link) => api.analytics.link(link.id, { ...rangeQuery(range, 'UTC'), timeBucket: 'day' })));
        setDaily(sumSeries(reports.map((report) => report.timeSeries), range));
      })
      .catch((caught) => setError(errorText(caught)));
  }, []);
  const data = useMemo(() => daily && seriesData(daily), [daily]);

  if (error) return <Notice>{error}</Notice>;
  if (!summary) return <p class="muted">Loading…</p>;
  // Keyed by id: two links may share a title.
  const titles = new Map(summary.topLinks.map((link) => [link.id, link.title]));
  const top = breakdownRows(Object.fromEntries(summary.topLinks.map((link) => [link.id, link.clicks])), (id) => titles.get(id) ?? id);
  return (
    <section>
      <h1>Overview</h1>
      <div class="totals">
        {([['Total links', summary.totalLinks], ['Total clicks', summary.totalClicks], ['Active links', summary.activeLinks]] as const).map(([label, value]) => (
          <div class="card total" key={label}><span class="total-label">{label}</span><span class="total-value">{numberFormat.format(value)}</span></div>
        ))}
      </div>
      {summary.totalLinks === 0 && (
        <div class="empty card"><h2>Start with a link</h2><p>Create a short link, share it, and its clicks show up here.</p>
          <AppLink href="/links/new" class="button">Create your first link</AppLink></div>
      )}
      {data && daily && (
        <ChartCard title="Clicks, last 30 days" chart={<TimeChart data={data.slice(0, 2)} labels={['Clicks']} timeZone="UTC" formatTime={(seconds) => bucketLabel(new Date(seconds * 1000).toISOString(), 'day', 'UTC')} />}
          table={() => <table><thead><tr><th scope="col">Day (UTC)</th><th scope="col" class="num">Clicks</th></tr></thead>
            <tbody>{daily.map((point) => <tr key={point.date}><th scope="row">{bucketLabel(point.date, 'day', 'UTC')}</th><td class="num">{point.clicks}</td></tr>)}</tbody></table>} />
      )}
      {top.length > 0 && <Breakdown title="Top links" dimension="Link" rows={top} />}
    </section>
  );
}

/** Adds daily series up by date (clicks only: visitors of different links cannot be added); with no links, a zero series over the range. */
function sumSeries(series: LinkAnalytics['timeSeries'][], range: { startDate: Date; endDate: Date }): DailyClicks[] {
  const totals = new Map<string, number>();
  const DAY = 86_400_000;
  for (let day = Math.floor(range.startDate.getTime() / DAY) * DAY; day < range.endDate.getTime(); day += DAY) totals.set(new Date(day).toISOString(), 0);
  for (const points of series) for (const point of points) totals.set(point.date, (totals.get(point.date) ?? 0) + point.clicks);
  return [...totals].sort(([a], [b]) => a.localeCompare(b)).map(([date, clicks]) => ({ date, clicks }));
}
