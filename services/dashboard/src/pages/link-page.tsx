import type { Link, LinkAnalytics, LinkAnalyticsQuery, TimeBucket } from '@deeplink/client';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { AppLink, ChartCard, CopyButton, download, errorText, isNotFound, LoadFailed, Notice } from '../components/common.js';
import { AppFunnel } from '../components/funnel.js';
import { FilterChips } from '../components/filter-chips.js';
import { LivePanel } from '../components/live-panel.js';
import { Skeleton } from '../components/loading.js';
import { ReportBreakdowns } from '../components/report-breakdowns.js';
import { AppEventsNote, LoadState } from '../components/report-state.js';
import { SeriesTable } from '../components/series-table.js';
import { TimeChart } from '../components/time-chart.js';
import { bucketLabel, seriesData } from '../lib/chart-data.js';
import { type Filter, type Filtered, filterQuery, parseFilters } from '../lib/filters.js';
import {
  allowedBuckets,
  defaultBucket,
  defaultTimeZone,
  localDay,
  PRESETS,
  rangeQuery,
  reportTimeZones,
  resolveRange,
  type RangePreset,
} from '../lib/ranges.js';
import { readReportView, type ReportView, withQuery, writeReportView } from '../lib/report-view.js';
import { navigate, useLocation } from '../lib/router.js';
import { api } from '../lib/session.js';

const numberFormat = new Intl.NumberFormat(undefined);

/** A link: its short URL and QR code, where each platform goes, and its clicks. */
export function LinkPage({ id }: { id: string }) {
  const [link, setLink] = useState<Link>();
  const [error, setError] = useState<string>();
  const [loadError, setLoadError] = useState<unknown>();
  const [attempt, setAttempt] = useState(0);
  const { query } = useLocation();
  useEffect(() => {
    setLoadError(undefined);
    api.links.get(id).then(setLink).catch(setLoadError);
  }, [id, attempt]);

  const back = { href: '/links', label: 'Back to your links' };
  if (loadError !== undefined) {
    return isNotFound(loadError) ? (
      <LoadFailed title="Link not found" message="There is no such link in your account: it may have been deleted." back={back} />
    ) : (
      <LoadFailed
        title="This link could not be loaded"
        message={errorText(loadError)}
        onRetry={() => setAttempt(attempt + 1)}
        back={back}
      />
    );
  }
  if (!link) return <Skeleton label="Loading the link…" lines={5} />;
  const remove = async () => {
    if (!confirm(`Delete “${link.title}” and its analytics? This cannot be undone.`)) return;
    try {
      await api.links.delete(link.id);
      navigate('/links');
    } catch (caught) {
      setError(errorText(caught));
    }
  };
  return (
    <section>
      <div class="page-head">
        <h1>{link.title}</h1>
        <div class="card-actions">
          <AppLink href={`/links/${link.id}/edit`} class="button secondary">
            Edit
          </AppLink>
          <button type="button" class="danger" onClick={remove}>
            Delete
          </button>
        </div>
      </div>
      {error && <Notice>{error}</Notice>}
      <div class="link-top">
        <section class="card" aria-labelledby="short-url-heading">
          <h2 id="short-url-heading">Short URL</h2>
          <p class="short-url">
            <a href={link.url} data-testid="short-url">
              {link.url}
            </a>{' '}
            <CopyButton text={link.url} />
          </p>
          <Destinations link={link} />
        </section>
        <QrCard link={link} />
      </div>
      <LivePanel
        path={`/analytics/links/${encodeURIComponent(link.id)}/live`}
        scope="This link's clicks"
        filtered={parseFilters(query).length > 0}
      />
      <Analytics link={link} />
    </section>
  );
}

/** Where each kind of visitor goes. */
function Destinations({ link }: { link: Link }) {
  const rows: [string, string][] = [];
  if (link.androidLink) {
    rows.push([
      'Android',
      `App ${link.androidLink.appPackageName}${link.androidLink.minimumVersion ? ` ≥ ${link.androidLink.minimumVersion}` : ''} at ${link.androidLink.url}; without it: ${link.androidLink.fallbackUrl ?? 'the Play Store'}`,
    ]);
  } else rows.push(['Android', link.defaultUrl]);
  if (link.iosLink) {
    rows.push([
      'iOS',
      `App ${link.iosLink.bundleId}${link.iosLink.minimumVersion ? ` ≥ ${link.iosLink.minimumVersion}` : ''} at ${link.iosLink.url}; without it: ${link.iosLink.fallbackUrl ?? 'the App Store'}`,
    ]);
  } else rows.push(['iOS', link.defaultUrl]);
  rows.push(['Desktop', link.desktopUrl ?? link.defaultUrl], ['Everyone else', link.defaultUrl]);
  const parameters = Object.entries(link.customParameters ?? {});
  return (
    <>
      <h3>Where visitors go</h3>
      <dl class="destinations">
        {rows.map(([platform, where]) => (
          <div key={platform}>
            <dt>{platform}</dt>
            <dd>{where}</dd>
          </div>
        ))}
      </dl>
      {parameters.length > 0 && <p class="muted">Adds {parameters.map(([key, value]) => `${key}=${value}`).join(', ')}</p>}
      {link.expirationDate && (
        <p class="muted">
          Expires {new Date(link.expirationDate).toLocaleString()}
          {link.expiredUrl ? `; then sends visitors to ${link.expiredUrl}` : ''}
        </p>
      )}
      {link.passwordProtected && <p class="muted">Asks visitors for a password first; a click counts once it is right.</p>}
      {link.clickCap !== undefined && (
        <p class="muted">
          After {link.clickCap.toLocaleString()} clicks, sends visitors to {link.capOverflowUrl ?? 'the “link expired” page'}.
        </p>
      )}
      {link.socialPreview && (
        <p class="muted">
          Shared, it shows “{link.socialPreview.title}”{link.socialPreview.description ? `: ${link.socialPreview.description}` : ''}
        </p>
      )}
      {link.tags && link.tags.length > 0 && (
        <p>
          {link.tags.map((tag) => (
            <span class="tag" key={tag}>
              {tag}
            </span>
          ))}
        </p>
      )}
    </>
  );
}

/** Reads a file as base64 (what the QR route takes as its logo). */
const base64Of = (file: File): Promise<string> =>
  new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });

/** The download sizes offered, in pixels: a screen, a flyer, a poster. */
const QR_DOWNLOAD_SIZES = [256, 512, 1024, 2048] as const;

/**
 * The QR code of the short URL: an SVG preview, PNG and SVG downloads, in the colours, quiet zone
 * and size chosen, with a logo in the centre if one is given (the API checks them: dark on light,
 * a PNG, sizes in its bounds).
 */
function QrCard({ link }: { link: Link }) {
  const [preview, setPreview] = useState<string>();
  const [error, setError] = useState<string>();
  const [style, setStyle] = useState({ color: '#000000', background: '#ffffff', margin: 4 });
  const [size, setSize] = useState<number>(1024);
  /** The logo: a file read here (base64), or the address the API fetches it from. */
  const [logo, setLogo] = useState<{ logo: string } | { logoUrl: string }>();
  const code = link.url.split('/').pop() ?? link.id;
  const svgOf = (size: number) =>
    logo
      ? api.links.qrWithLogo(link.id, { ...style, ...logo, format: 'svg', size })
      : api.links.qr(link.id, { ...style, format: 'svg', size });
  const pngOf = (size: number) =>
    logo
      ? api.links.qrWithLogo(link.id, { ...style, ...logo, format: 'png', size })
      : api.links.qr(link.id, { ...style, format: 'png', size });
  const logoKey = logo && ('logo' in logo ? logo.logo : logo.logoUrl);
  useEffect(() => {
    let url: string | undefined;
    setError(undefined);
    svgOf(256)
      .then((svg) => {
        // Shown as an image (blob: URL), not as markup in the page.
        url = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
        setPreview(url);
      })
      .catch((caught) => setError(errorText(caught)));
    return () => url && URL.revokeObjectURL(url);
  }, [link.id, link.url, style.color, style.background, style.margin, logoKey]);
  const save = (format: 'png' | 'svg') => async () => {
    try {
      if (format === 'png') download(await pngOf(size), `qr-${code}-${size}.png`);
      else download(await svgOf(size), `qr-${code}.svg`, 'image/svg+xml');
    } catch (caught) {
      setError(errorText(caught));
    }
  };
  const chooseLogo = async (file: File | undefined) => {
    if (!file) return setLogo(undefined);
    try {
      setLogo({ logo: await base64Of(file) });
    } catch (caught) {
      setError(errorText(caught));
    }
  };
  const chooseLogoUrl = (url: string) => setLogo(url.trim() ? { logoUrl: url.trim() } : undefined);
  return (
    <section class="card qr" aria-labelledby="qr-heading">
      <h2 id="qr-heading">QR code</h2>
      {preview ? <img src={preview} width={192} height={192} alt={`QR code for ${link.url}`} /> : <div class="qr-placeholder" />}
      {error && <Notice>{error}</Notice>}
      <details class="qr-style">
        <summary>Colours, logo and size</summary>
        <div class="field inline">
          <label for="qr-color">Code colour</label>
          <input
            id="qr-color"
            type="color"
            value={style.color}
            onChange={(event) => setStyle({ ...style, color: event.currentTarget.value })}
          />
        </div>
        <div class="field inline">
          <label for="qr-background">Background</label>
          <input
            id="qr-background"
            type="color"
            value={style.background}
            onChange={(event) => setStyle({ ...style, background: event.currentTarget.value })}
          />
        </div>
        <div class="field">
          <label for="qr-logo">Logo in the centre (PNG)</label>
          <input id="qr-logo" type="file" accept="image/png" onChange={(event) => void chooseLogo(event.currentTarget.files?.[0])} />
          <p class="hint">Drawn over a fifth of the code's width; the code then uses its highest error correction, and still scans.</p>
        </div>
        <div class="field">
          <label for="qr-logo-url">Or the logo's address (your app's icon, say)</label>
          <input
            id="qr-logo-url"
            type="url"
            placeholder="https://example.com/icon.png"
            onChange={(event) => chooseLogoUrl(event.currentTarget.value)}
          />
        </div>
        <div class="field inline">
          <label for="qr-margin">Quiet zone</label>
          <select
            id="qr-margin"
            value={style.margin}
            onChange={(event) => setStyle({ ...style, margin: Number(event.currentTarget.value) })}
          >
            {[0, 1, 2, 4, 8].map((modules) => (
              <option key={modules} value={modules}>
                {modules === 4 ? '4 modules (the standard)' : `${modules} module${modules === 1 ? '' : 's'}`}
              </option>
            ))}
          </select>
        </div>
        <div class="field inline">
          <label for="qr-size">Download size</label>
          <select id="qr-size" value={size} onChange={(event) => setSize(Number(event.currentTarget.value))}>
            {QR_DOWNLOAD_SIZES.map((pixels) => (
              <option key={pixels} value={pixels}>
                {pixels} × {pixels} px
              </option>
            ))}
          </select>
        </div>
      </details>
      <div class="card-actions">
        <button type="button" class="secondary small" onClick={save('png')}>
          Download PNG
        </button>
        <button type="button" class="secondary small" onClick={save('svg')}>
          Download SVG
        </button>
      </div>
    </section>
  );
}

/** The report: range, bucket, zone and filters (all in the address), totals, the time series, the app funnel and the breakdowns, each with its table. */
function Analytics({ link }: { link: Link }) {
  const { path, query: search } = useLocation();
  const zones = useMemo(() => reportTimeZones(new Date()), []);
  const browserZone = useMemo(() => defaultTimeZone(new Date()), []);
  /** The browser's own zone when reports cannot use it (it is not a whole number of hours from UTC). */
  const unusableZone = useMemo(() => {
    const own = Intl.DateTimeFormat().resolvedOptions().timeZone;
    return own && own !== 'UTC' && browserZone === 'UTC' ? own : undefined;
  }, [browserZone]);
  const view = useMemo(() => readReportView(search, new Date(), zones, browserZone), [search.toString(), zones, browserZone]);
  const show = (changes: Partial<ReportView>) =>
    navigate(withQuery(path, writeReportView({ ...view, ...changes }, new Date(), browserZone)));
  const [report, setReport] = useState<LinkAnalytics>();
  const [loading, setLoading] = useState(true);
  const [arrivedAt, setArrivedAt] = useState(0);
  const [error, setError] = useState<string>();
  const [reload, setReload] = useState(0);
  const { preset, custom, timeZone, filters } = view;
  const range = useMemo(() => resolveRange(preset, new Date(), custom), [preset, custom.from, custom.to, reload]);
  const buckets = allowedBuckets(range);
  const filterParams = filterQuery(filters);
  const query: Filtered<LinkAnalyticsQuery> = {
    ...rangeQuery(range, timeZone, preset === 'custom' ? custom : undefined),
    timeBucket: buckets.includes(view.bucket) ? view.bucket : defaultBucket(preset, range),
    ...filterParams,
  };

  useEffect(() => {
    const controller = new AbortController();
    setError(undefined);
    setLoading(true);
    api.analytics
      .link(link.id, query, { signal: controller.signal })
      .then((data) => {
        setArrivedAt(performance.now());
        setReport(data);
        setLoading(false);
      })
      .catch((caught) => {
        if (controller.signal.aborted) return;
        // No numbers rather than the last ones under a view that failed.
        setReport(undefined);
        setError(errorText(caught));
        setLoading(false);
      });
    return () => controller.abort();
  }, [link.id, range.startDate.getTime(), range.endDate.getTime(), query.timeBucket, timeZone, JSON.stringify(filterParams), reload]);

  const choosePreset = (next: RangePreset) => show({ preset: next, bucket: defaultBucket(next, resolveRange(next, new Date(), custom)) });
  const exportAs = (format: 'csv' | 'json') => async () => {
    try {
      const name = `clicks-${link.url.split('/').pop()}-${localDay(range.startDate)}-${localDay(range.endDate)}${filters.length > 0 ? '-filtered' : ''}`;
      // Wide: a row per bucket of the view (its zone and filters) with clicks and unique clicks,
      // then a column per platform, device, app event and top value: what a spreadsheet wants.
      if (format === 'csv') {
        download(await api.analytics.export(link.id, { ...query, format: 'csv', layout: 'wide' }), `${name}.csv`, 'text/csv');
      } else
        download(
          JSON.stringify(await api.analytics.export(link.id, { ...query, format: 'json', layout: 'wide' }), null, 2),
          `${name}.json`,
          'application/json',
        );
    } catch (caught) {
      setError(errorText(caught));
    }
  };

  return (
    <section class="analytics" aria-labelledby="analytics-heading" aria-busy={loading}>
      <div class="page-head">
        <h2 id="analytics-heading">Analytics</h2>
        <div class="card-actions">
          <button type="button" class="secondary small" onClick={() => setReload(reload + 1)}>
            Refresh
          </button>
          <button type="button" class="secondary small" onClick={exportAs('csv')}>
            Export CSV
          </button>
          <button type="button" class="secondary small" onClick={exportAs('json')}>
            Export JSON
          </button>
        </div>
      </div>
      <div class="toolbar">
        <fieldset class="presets">
          <legend>Range</legend>
          {[...PRESETS, { id: 'custom' as const, label: 'Custom' }].map((option) => (
            <label key={option.id} class="chip">
              <input type="radio" name="range" value={option.id} checked={preset === option.id} onChange={() => choosePreset(option.id)} />
              {option.label}
            </label>
          ))}
        </fieldset>
        {preset === 'custom' && (
          // A cleared date keeps the one before: a range needs both ends.
          <>
            <div class="field inline">
              <label for="range-from">From</label>
              <input
                id="range-from"
                type="date"
                value={custom.from}
                max={custom.to}
                onChange={(event) => event.currentTarget.value && show({ custom: { ...custom, from: event.currentTarget.value } })}
              />
            </div>
            <div class="field inline">
              <label for="range-to">To</label>
              <input
                id="range-to"
                type="date"
                value={custom.to}
                min={custom.from}
                onChange={(event) => event.currentTarget.value && show({ custom: { ...custom, to: event.currentTarget.value } })}
              />
            </div>
          </>
        )}
        <div class="field inline">
          <label for="bucket">Bucket</label>
          <select id="bucket" value={query.timeBucket} onChange={(event) => show({ bucket: event.currentTarget.value as TimeBucket })}>
            {buckets.map((option) => (
              <option key={option} value={option}>
                {option[0]!.toUpperCase() + option.slice(1)}
              </option>
            ))}
          </select>
        </div>
        <div class="field inline">
          <label for="time-zone">Time zone</label>
          <select
            id="time-zone"
            value={timeZone}
            aria-describedby={unusableZone ? 'time-zone-note' : undefined}
            onChange={(event) => show({ timeZone: event.currentTarget.value })}
          >
            {zones.map((zone) => (
              <option key={zone} value={zone}>
                {zone.replace(/_/g, ' ')}
              </option>
            ))}
          </select>
          {unusableZone && (
            <p class="hint" id="time-zone-note">
              {`Clicks are counted per UTC hour, so reports use zones a whole number of hours from UTC; yours (${unusableZone.replace(/_/g, ' ')}) is not, and UTC is shown.`}
            </p>
          )}
        </div>
      </div>
      <FilterChips filters={filters} onChange={(next) => show({ filters: next })} />
      <LoadState loading={loading} error={error} onRetry={() => setReload(reload + 1)} />
      {!report && loading && <Skeleton kind="chart" lines={4} />}
      {report && (
        <div class={loading ? 'stale' : undefined}>
          <Report
            report={report}
            arrivedAt={arrivedAt}
            timeZone={timeZone}
            filters={filters}
            onFilter={(next) => show({ filters: next })}
          />
        </div>
      )}
    </section>
  );
}

/** The numbers of one report: buckets start at midnight (or on the hour) in `timeZone`, and are labelled in it. */
function Report({
  report,
  arrivedAt,
  timeZone,
  filters,
  onFilter,
}: {
  report: LinkAnalytics;
  arrivedAt: number;
  timeZone: string;
  filters: Filter[];
  onFilter: (next: Filter[]) => void;
}) {
  const bucket = report.range.timeBucket;
  const data = useMemo(() => seriesData(report.timeSeries), [report]);
  // From the data's arrival to the chart drawn, as a performance measure naming its bucket and size (the browser test prints it).
  const onDrawn = () =>
    performance.measure('report-draw', { start: arrivedAt, end: performance.now(), detail: { bucket, points: report.timeSeries.length } });
  const series = () => (
    <SeriesTable
      points={report.timeSeries}
      bucket={bucket}
      timeZone={timeZone}
      columns={[
        { label: 'Clicks', value: (point) => point.clicks },
        { label: 'Unique clicks', value: (point) => point.uniqueClicks },
      ]}
    />
  );
  return (
    <>
      <dl class="totals">
        <div class="card total">
          <dt class="total-label">Total clicks</dt>
          <dd class="total-value">{numberFormat.format(report.totalClicks)}</dd>
        </div>
        <div class="card total">
          <dt class="total-label">Unique clicks</dt>
          <dd class="total-value">{numberFormat.format(report.uniqueClicks)}</dd>
        </div>
        <div class="card total">
          <dt class="total-label">Link previews</dt>
          <dd class="total-value">{numberFormat.format(report.previews)}</dd>
          <dd class="hint">Crawlers showing the link in a chat or post; not clicks</dd>
        </div>
      </dl>
      <ChartCard
        title="Clicks over time"
        table={series}
        chart={
          <TimeChart
            data={data}
            labels={['Clicks', 'Unique clicks']}
            timeZone={timeZone}
            formatTime={(seconds) => bucketLabel(new Date(seconds * 1000).toISOString(), bucket, timeZone)}
            onDrawn={onDrawn}
          />
        }
      />
      <AppEventsNote report={report} />
      <AppFunnel report={report} timeZone={timeZone} />
      <ReportBreakdowns report={report} filters={filters} onFilter={onFilter} />
    </>
  );
}
