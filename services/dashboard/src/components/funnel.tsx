import type { LinkAnalytics } from '@deeplink/client';
import { useMemo } from 'preact/hooks';
import { bucketLabel, funnelSeriesData } from '../lib/chart-data.js';
import { FUNNEL_PLATFORMS, FUNNEL_STEPS, type FunnelCell, funnelRows, reOpens } from '../lib/funnel.js';
import { ChartCard, ScrollTable } from './common.js';
import { SeriesTable } from './series-table.js';
import { TimeChart } from './time-chart.js';

const numberFormat = new Intl.NumberFormat(undefined);
const percent = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 1 });
const rateText = (rate: number | null) => (rate === null ? '—' : percent.format(rate));

/** A count and, below the first step, its share of the step before ("—" when there was nothing before). */
function Cell({ cell, first }: { cell: FunnelCell; first: boolean }) {
  return (
    <td class="num">
      <span class="funnel-count">{numberFormat.format(cell.count)}</span>
      {!first && <span class="funnel-rate">{rateText(cell.rate)}</span>}
    </td>
  );
}

/**
 * The link's app funnel: clicks → store redirects → installs → first opens, per platform and in
 * all, each step with its rate from the step before (the API's own figures for all platforms),
 * re-opens apart; then the same steps over time, as a chart or a table.
 */
export function AppFunnel({ report, timeZone }: { report: LinkAnalytics; timeZone: string }) {
  const rows = funnelRows(report.appEvents);
  const apart = reOpens(report.appEvents);
  const bucket = report.range.timeBucket;
  const data = useMemo(() => funnelSeriesData(report.timeSeries), [report]);
  const overTime = () => (
    <SeriesTable
      points={report.timeSeries}
      bucket={bucket}
      timeZone={timeZone}
      columns={[
        { label: 'Clicks', value: (point) => point.clicks },
        { label: 'Store redirects', value: (point) => point.appEvents.REDIRECT },
        { label: 'Installs', value: (point) => point.appEvents.APP_INSTALL },
        { label: 'First opens', value: (point) => point.appEvents.APP_FIRST_OPEN },
        { label: 'Re-opens', value: (point) => point.appEvents.APP_RE_OPEN },
      ]}
    />
  );
  return (
    <>
      <section class="card" aria-labelledby="funnel-heading">
        <h2 id="funnel-heading">App funnel</h2>
        <ScrollTable label="The app funnel, as a table">
          <table class="funnel">
            <caption class="muted">
              Under each count, its share of the step above on the same platform. Whole funnel, first opens per click:{' '}
              {rateText(report.appEvents.conversion.firstOpenPerClick)}
            </caption>
            <thead>
              <tr>
                <th scope="col">Step</th>
                {FUNNEL_PLATFORMS.map((platform) => (
                  <th scope="col" class="num" key={platform.key}>
                    {platform.label}
                  </th>
                ))}
                <th scope="col" class="num">
                  All platforms
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row, index) => (
                <tr key={row.key} data-step={row.key}>
                  <th scope="row">{row.label}</th>
                  {FUNNEL_PLATFORMS.map((platform) => (
                    <Cell key={platform.key} cell={row.platforms[platform.key]} first={index === 0} />
                  ))}
                  <Cell cell={row.total} first={index === 0} />
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollTable>
        {/* Re-opens measure use, not acquisition: beside the funnel, never a step of it. */}
        <p class="funnel-apart" data-testid="re-opens">
          Re-opens, not part of the funnel: <strong>{numberFormat.format(apart.total)}</strong> (
          {FUNNEL_PLATFORMS.map((platform) => `${platform.label} ${numberFormat.format(apart.platforms[platform.key])}`).join(', ')})
        </p>
      </section>
      <ChartCard
        title="App funnel over time"
        table={overTime}
        chart={
          <TimeChart
            data={data}
            labels={FUNNEL_STEPS.map((step) => step.label)}
            timeZone={timeZone}
            formatTime={(seconds) => bucketLabel(new Date(seconds * 1000).toISOString(), bucket, timeZone)}
          />
        }
      />
    </>
  );
}
