import { Notice } from './common.js';
import { Spinner } from './loading.js';

/**
 * A report's loading and error states: said politely while it loads (the last numbers stay,
 * dimmed), alerted when it fails, with Retry.
 */
export function LoadState({ loading, error, onRetry }: { loading: boolean; error: string | undefined; onRetry: () => void }) {
  if (error) {
    return (
      <div class="load-error">
        <Notice>{error}</Notice>
        <button type="button" class="secondary small" onClick={onRetry}>
          Retry
        </button>
      </div>
    );
  }
  return (
    <p class="muted load-state" role="status">
      {loading && (
        <>
          <Spinner /> Loading…
        </>
      )}
    </p>
  );
}

/**
 * Under filters on anything but the platform, app events (installs, opens) are not filtered: they
 * carry only a platform. The API says so with `appEventsFiltered: false`, and so does the page.
 */
export function AppEventsNote({ report }: { report: { appEventsFiltered?: boolean } }) {
  if (report.appEventsFiltered !== false) return null;
  return (
    <Notice kind="info">
      The app events (store redirects, installs and opens) are not filtered: they carry only a platform, so only a filter on the platform
      applies to them.
    </Notice>
  );
}
