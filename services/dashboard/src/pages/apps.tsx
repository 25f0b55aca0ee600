import type { App, AppWithKey } from '@deeplink/client';
import { useEffect, useState } from 'preact/hooks';
import { AddAppForm } from '../components/add-app-form.js';
import { CopyButton, errorText, Notice, ScrollTable } from '../components/common.js';
import { FirstLoad } from '../components/loading.js';
import { api } from '../lib/session.js';

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** What tells an app apart in the list: its name, else its bundle id or package name. */
const appLabel = (app: App) => app.name ?? app.bundleId ?? app.packageName ?? app.id;

/** What the app puts in the domains' association files: Apple's app ID, or Android's package and certificates. */
const associationOf = (app: App) =>
  app.platform === 'ios'
    ? `${app.teamId}.${app.bundleId}`
    : `${app.packageName} (${app.sha256CertFingerprints?.length ?? 0} certificate${app.sha256CertFingerprints?.length === 1 ? '' : 's'})`;

/** The windows offered for the probabilistic install match, in minutes (the API takes 5 to 1440). */
const WINDOW_CHOICES = [30, 60, 120, 240, 720, 1440];
const windowLabel = (minutes: number) => (minutes < 60 ? `${minutes} min` : `${minutes / 60} h`);

/**
 * Apps: each with its app key's prefix (never the key), a rotation that shows the new key once, and
 * the probabilistic install match (off by default; turning it on asks first, since it matches
 * installs by device facts rather than by a token).
 */
export function AppsPage() {
  const [apps, setApps] = useState<App[]>();
  const [rotated, setRotated] = useState<AppWithKey>();
  const [error, setError] = useState<string>();
  const load = () => {
    setError(undefined);
    return api.apps
      .list()
      .then(setApps)
      .catch((caught) => setError(errorText(caught)));
  };
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

  const changeSettings = async (app: App, changes: { fingerprintMatching?: boolean; fingerprintWindowMinutes?: number }) => {
    if (
      changes.fingerprintMatching &&
      !confirm(
        `Match installs of “${appLabel(app)}” by device facts when no install token comes back? It is probabilistic, and your app's privacy disclosures must cover it (see the app integration guide).`,
      )
    ) {
      // Drawn again, so the box the click ticked shows the setting, still off.
      setApps((current) => current && [...current]);
      return;
    }
    setError(undefined);
    try {
      const updated = await api.apps.update(app.id, changes);
      setApps((current) => current?.map((each) => (each.id === updated.id ? updated : each)));
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
          <h2>The key of “{appLabel(rotated)}”</h2>
          <p class="warning">
            <strong>Copy it now: it is shown only this once.</strong> Any previous key no longer works.
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
      <AddAppForm
        onAdded={(app) => {
          setRotated(app);
          void load();
        }}
      />
      {apps === undefined && <FirstLoad label="Loading apps…" failed={error !== undefined} onRetry={load} />}
      {apps && apps.length === 0 && <p class="muted">No apps yet: add your iOS and Android apps above.</p>}
      {apps && apps.length > 0 && (
        <ScrollTable label="Your apps">
          <table>
            <thead>
              <tr>
                <th scope="col">App</th>
                <th scope="col">Platform</th>
                <th scope="col">In the association files</th>
                <th scope="col">App key</th>
                <th scope="col">Key created</th>
                <th scope="col">Fingerprint match</th>
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
                  <td>
                    <code>{associationOf(app)}</code>
                  </td>
                  <td class="nowrap">
                    {app.keyPrefix ? <code data-testid="key-prefix">{app.keyPrefix}…</code> : <span class="muted">None</span>}
                  </td>
                  <td class="nowrap">{app.keyCreatedAt ? dateFormat.format(new Date(app.keyCreatedAt)) : '—'}</td>
                  <td class="nowrap">
                    <label>
                      <input
                        type="checkbox"
                        checked={app.fingerprintMatching}
                        aria-label={`Fingerprint match for ${appLabel(app)}`}
                        onChange={(event) => changeSettings(app, { fingerprintMatching: event.currentTarget.checked })}
                      />{' '}
                      {app.fingerprintMatching ? 'On' : 'Off'}
                    </label>{' '}
                    <select
                      class="inline"
                      aria-label={`Fingerprint match window for ${appLabel(app)}`}
                      value={app.fingerprintWindowMinutes}
                      disabled={!app.fingerprintMatching}
                      onChange={(event) => changeSettings(app, { fingerprintWindowMinutes: Number(event.currentTarget.value) })}
                    >
                      {[...new Set([...WINDOW_CHOICES, app.fingerprintWindowMinutes])]
                        .sort((a, b) => a - b)
                        .map((minutes) => (
                          <option key={minutes} value={minutes}>
                            {windowLabel(minutes)}
                          </option>
                        ))}
                    </select>
                  </td>
                  <td>
                    <button
                      type="button"
                      class="secondary small"
                      aria-label={`${app.keyPrefix ? 'Rotate key' : 'Create key'} of ${appLabel(app)}`}
                      onClick={() => rotate(app)}
                    >
                      {app.keyPrefix ? 'Rotate key' : 'Create key'}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollTable>
      )}
    </section>
  );
}
