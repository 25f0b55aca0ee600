import type { Domain, Import, ImportRowPage } from '@deeplink/client';
import { parse } from 'csv-parse/browser/esm/sync';
import { useEffect, useState } from 'preact/hooks';
import { AppLink, errorText, Notice, ScrollTable } from '../components/common.js';
import { api } from '../lib/session.js';

const FORMATS = [
  { value: 'takeout', label: 'Firebase Dynamic Links (Google Takeout)' },
  { value: 'bitly', label: 'Bitly' },
  { value: 'shlink', label: 'Shlink' },
  { value: 'kutt', label: 'Kutt' },
  { value: 'yourls', label: 'YOURLS' },
  { value: 'generic', label: 'Other CSV (choose the columns)' },
] as const;
type Format = (typeof FORMATS)[number]['value'];

/** The fields a generic CSV's columns can fill, as the mapping names them; the first two are required. */
const MAPPED_FIELDS = [
  { field: 'code', label: 'Short code or short URL' },
  { field: 'defaultUrl', label: 'Destination' },
  { field: 'title', label: 'Title' },
  { field: 'tags', label: 'Tags' },
  { field: 'desktopUrl', label: 'Desktop destination' },
  { field: 'androidPackageName', label: 'Android package' },
  { field: 'androidUrl', label: 'Android app link' },
  { field: 'androidFallbackUrl', label: 'Android fallback' },
  { field: 'iosBundleId', label: 'iOS bundle id' },
  { field: 'iosUrl', label: 'iOS app link' },
  { field: 'iosFallbackUrl', label: 'iOS fallback' },
  { field: 'expirationDate', label: 'Expiry date' },
  { field: 'createdAt', label: 'Creation time' },
] as const;

/** Rows of the file shown before it is sent. */
const PREVIEW_ROWS = 5;
/** How often the progress is read while the file is sent. */
const POLL_MS = 400;

/** The first rows of a CSV file, parsed here in the browser from its first 64 KiB. */
async function previewOf(file: File): Promise<string[][]> {
  const text = await file.slice(0, 64 * 1024).text();
  return parse(text, {
    bom: true,
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: true,
    to_line: PREVIEW_ROWS + 1,
  }) as string[][];
}

/** Import links from a CSV file: format, preview, a dry run, the import with its progress, then the report. */
export function ImportPage() {
  const [domains, setDomains] = useState<Domain[]>([]);
  const [format, setFormat] = useState<Format>('takeout');
  const [domain, setDomain] = useState('');
  const [file, setFile] = useState<File>();
  const [preview, setPreview] = useState<string[][]>();
  const [mapping, setMapping] = useState<Record<string, string>>({});
  const [running, setRunning] = useState<Import>();
  const [result, setResult] = useState<Import>();
  const [refused, setRefused] = useState<ImportRowPage>();
  const [error, setError] = useState<string>();

  useEffect(() => {
    api.domains
      .list()
      .then((all) => setDomains(all.filter((item) => item.status === 'active')))
      .catch((caught) => setError(errorText(caught)));
  }, []);

  const choose = async (chosen: File | undefined) => {
    setFile(chosen);
    setPreview(undefined);
    setResult(undefined);
    setError(undefined);
    if (!chosen) return;
    try {
      setPreview(await previewOf(chosen));
    } catch (caught) {
      setError(`This file cannot be read as CSV: ${errorText(caught)}`);
    }
  };

  const run = async (dryRun: boolean) => {
    if (!file) return;
    setError(undefined);
    setResult(undefined);
    setRefused(undefined);
    let poller: ReturnType<typeof setInterval> | undefined;
    try {
      const created = await api.imports.create({
        format,
        dryRun,
        ...(domain && { domain }),
        ...(format === 'generic' && { mapping: Object.fromEntries(Object.entries(mapping).filter(([, column]) => column)) }),
      });
      setRunning(created);
      poller = setInterval(() => {
        api.imports
          .get(created.id)
          .then((state) => setRunning((shown) => (shown ? state : shown)))
          .catch(() => {});
      }, POLL_MS);
      // A large file takes minutes: the upload's timeout is the import's, not a request's.
      const done = await api.imports.upload(created.id, file, { timeoutMs: 30 * 60_000 });
      setResult(done);
      if (done.refused > 0) setRefused(await api.imports.rows(done.id, { outcome: 'refused', limit: 100 }));
    } catch (caught) {
      setError(errorText(caught));
    } finally {
      clearInterval(poller);
      setRunning(undefined);
    }
  };

  const header = preview?.[0] ?? [];
  const mappingReady = format !== 'generic' || (mapping.code && mapping.defaultUrl);
  const busy = running !== undefined;
  const progressMax = running?.totalBytes ?? file?.size ?? 0;

  return (
    <section>
      <div class="page-head">
        <h1>Import links</h1>
      </div>
      <p class="muted">
        Bring your links from Firebase Dynamic Links or another shortener. Each link keeps its short path, so old links work again once
        their domain points here.
      </p>
      <form
        class="card"
        onSubmit={(event) => {
          event.preventDefault();
          void run(false);
        }}
      >
        <div class="field">
          <label for="import-format">Format</label>
          <select id="import-format" value={format} onChange={(event) => setFormat(event.currentTarget.value as Format)}>
            {FORMATS.map((item) => (
              <option key={item.value} value={item.value}>
                {item.label}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="import-domain">Domain of the links</label>
          <select id="import-domain" value={domain} onChange={(event) => setDomain(event.currentTarget.value)}>
            <option value="">The default domain</option>
            {domains.map((item) => (
              <option key={item.id} value={item.hostname}>
                {item.hostname}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="import-file">CSV file (up to 50 MB)</label>
          <input id="import-file" type="file" accept=".csv,text/csv" onChange={(event) => void choose(event.currentTarget.files?.[0])} />
        </div>
        {preview && preview.length > 0 && (
          <div class="card">
            <h2>Preview</h2>
            <ScrollTable label="The first rows of the file">
              <table data-testid="import-preview">
                <caption class="visually-hidden">The first rows of the file</caption>
                <thead>
                  <tr>
                    {header.map((name, index) => (
                      <th scope="col" key={index}>
                        {name}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {preview.slice(1).map((row, rowIndex) => (
                    <tr key={rowIndex}>
                      {header.map((_, index) => (
                        <td key={index}>{row[index] ?? ''}</td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </ScrollTable>
          </div>
        )}
        {format === 'generic' && preview && (
          <fieldset class="card">
            <legend>Which column holds what</legend>
            {MAPPED_FIELDS.map(({ field, label }, index) => (
              <div class="field" key={field}>
                <label for={`map-${field}`}>
                  {label}
                  {index < 2 && ' (required)'}
                </label>
                <select
                  id={`map-${field}`}
                  value={mapping[field] ?? ''}
                  required={index < 2}
                  onChange={(event) => setMapping({ ...mapping, [field]: event.currentTarget.value })}
                >
                  <option value="">Not in the file</option>
                  {header.map((name) => (
                    <option key={name} value={name}>
                      {name}
                    </option>
                  ))}
                </select>
              </div>
            ))}
          </fieldset>
        )}
        <div class="card-actions">
          <button type="button" class="secondary" disabled={!file || busy || !mappingReady} onClick={() => void run(true)}>
            Check without importing
          </button>
          <button type="submit" disabled={!file || busy || !mappingReady}>
            Import
          </button>
        </div>
      </form>
      {running && (
        <div class="card" role="status">
          <label for="import-progress">
            {running.dryRun ? 'Checking' : 'Importing'}: {running.rows} rows done
          </label>
          <progress id="import-progress" max={progressMax || undefined} value={progressMax ? running.bytesRead : undefined} />
        </div>
      )}
      {error && <Notice>{error}</Notice>}
      {result && <ImportReport result={result} refused={refused} />}
    </section>
  );
}

function ImportReport({ result, refused }: { result: Import; refused?: ImportRowPage }) {
  const verb = result.dryRun ? 'would be ' : '';
  return (
    <div class="card" data-testid="import-report">
      <h2>{result.dryRun ? 'Check finished: nothing was written' : 'Import finished'}</h2>
      <ul>
        <li>
          {result.created} {verb}created
        </li>
        <li>
          {result.updated} {verb}updated
        </li>
        <li>{result.unchanged} unchanged</li>
        <li>{result.refused} refused</li>
      </ul>
      {!result.dryRun && result.created + result.updated > 0 && (
        <p>
          <AppLink href="/links">See your links</AppLink>
        </p>
      )}
      {refused && refused.rows.length > 0 && (
        <ScrollTable label="Refused rows">
          <table>
            <caption>
              Refused rows
              {refused.pagination.total > refused.rows.length && ` (the first ${refused.rows.length} of ${refused.pagination.total})`}
            </caption>
            <thead>
              <tr>
                <th scope="col">Line</th>
                <th scope="col">Code</th>
                <th scope="col">Why</th>
              </tr>
            </thead>
            <tbody>
              {refused.rows.map((row) => (
                <tr key={row.line}>
                  <th scope="row">{row.line}</th>
                  <td>{row.code ?? ''}</td>
                  <td>{(row.errors ?? []).map((problem) => `${problem.field} ${problem.message}`).join('; ')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollTable>
      )}
    </div>
  );
}
