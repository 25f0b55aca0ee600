import type { App, AppWithKey } from '@deeplink/client';
import { useEffect, useState } from 'preact/hooks';
import { CopyButton, errorText, Notice } from '../components/common.js';
import { api } from '../lib/session.js';

const dateFormat = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short' });

/** What tells an app apart in the list: its name, else its bundle id or package name. */
const appLabel = (app: App) => app.name ?? app.bundleId ?? app.packageName ?? app.id;

/** Apps: each with its app key's prefix (never the key), and a rotation that shows the new key once. */
export function AppsPage() {
  const [apps, setApps] = useState<App[]>();
  const [rotated, setRotated] = useState<AppWithKey>();
  const [error, setError] = useState<string>();
  const load = () =>
    api.apps
      .list()
      .then(setApps)
      .catch((caught) => setError(errorText(caught)));
  useEffect(() => {
    void load();
  }, []);

  const rotate = async (app: App) => {
    const question = app.keyPrefix
      ? `Replace the key of “${appLabel(app)}” (${app.keyPrefix}…)? Installs still using it stop resolving links at once.`
      : `Create a key for “${appLabel(app)}”?`;
    if (!confirm(question)) return;
    setError(undefined);
    try {
      setRotated(await api.apps.rotateKey(app.id));
      await load();
    } catch (caught) {
      setError(errorText(caught));
    }
  };

  return (
    <section>
      <h1>Apps</h1>
      <p class="muted">
        Each app has a publishable app key: it is safe to ship inside the app, and lets the app resolve the links it is opened with (and
        nothing else).
      </p>
      {rotated && (
        <div class="card new-key" role="status">
          <h2>The new key of “{appLabel(rotated)}”</h2>
          <p class="warning">
            <strong>Copy it now: it is shown only this once.</strong> The previous key no longer works.
          </p>
          <p>
            <code data-testid="new-app-key">{rotated.key}</code> <CopyButton text={rotated.key} label="Copy key" />
          </p>
          <button type="button" class="secondary small" onClick={() => setRotated(undefined)}>
            I have saved it
          </button>
        </div>
      )}
      {error && <Notice>{error}</Notice>}
      {apps && apps.length === 0 && <p class="muted">No apps yet. Register your iOS and Android apps through the API (POST /api/apps).</p>}
      {apps && apps.length > 0 && (
        <div class="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">App</th>
                <th scope="col">Platform</th>
                <th scope="col">App key</th>
                <th scope="col">Key created</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {apps.map((app) => (
                <tr key={app.id}>
                  <th scope="row">{appLabel(app)}</th>
                  <td>{app.platform === 'ios' ? 'iOS' : 'Android'}</td>
                  <td class="nowrap">{app.keyPrefix ? <code>{app.keyPrefix}…</code> : <span class="muted">None</span>}</td>
                  <td class="nowrap">{app.keyCreatedAt ? dateFormat.format(new Date(app.keyCreatedAt)) : '—'}</td>
                  <td>
                    <button
                      type="button"
                      class="secondary small"
                      aria-label={`Rotate the key of ${appLabel(app)}`}
                      onClick={() => rotate(app)}
                    >
                      {app.keyPrefix ? 'Rotate key' : 'Create key'}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
