import type { ApiKey, ApiKeyListItem } from '@deeplink/client';
import { useEffect, useState } from 'preact/hooks';
import { CopyButton, errorText, Notice, ScrollTable } from '../components/common.js';
import { FirstLoad } from '../components/loading.js';
import { api } from '../lib/session.js';

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** API keys: the list (never the secrets), a new key shown once, revocation after a confirmation. */
export function ApiKeysPage() {
  const [keys, setKeys] = useState<ApiKeyListItem[]>();
  const [created, setCreated] = useState<ApiKey>();
  const [name, setName] = useState('');
  const [error, setError] = useState<string>();
  const load = () => {
    setError(undefined);
    return api.apiKeys
      .list()
      .then(setKeys)
      .catch((caught) => setError(errorText(caught)));
  };
  useEffect(() => {
    void load();
  }, []);

  const create = async (event: SubmitEvent) => {
    event.preventDefault();
    setError(undefined);
    try {
      setCreated(await api.apiKeys.create({ name: name.trim() }));
      setName('');
      await load();
    } catch (caught) {
      setError(errorText(caught));
    }
  };
  const revoke = async (key: ApiKeyListItem) => {
    if (!confirm(`Revoke the key “${key.name}” (${key.prefix}…)? Programs using it stop working at once.`)) return;
    try {
      await api.apiKeys.delete(key.id);
      if (created?.id === key.id) setCreated(undefined);
      await load();
    } catch (caught) {
      setError(errorText(caught));
    }
  };

  return (
    <section>
      <h1>API keys</h1>
      <form class="toolbar card" onSubmit={create}>
        <div class="field inline">
          <label for="key-name">Key name</label>
          <input
            id="key-name"
            value={name}
            required
            maxLength={100}
            placeholder="e.g. CRM sync"
            onInput={(event) => setName(event.currentTarget.value)}
          />
        </div>
        <button type="submit">Create key</button>
      </form>
      {created && (
        <div class="card new-key" role="status">
          <h2>Your new key “{created.name}”</h2>
          <p class="warning">
            <strong>Copy it now: it is shown only this once.</strong> Anyone with this key can act as you through the API; keep it out of
            code you share.
          </p>
          <p>
            <code data-testid="new-key">{created.key}</code> <CopyButton text={created.key} label="Copy key" />
          </p>
          <button type="button" class="secondary small" onClick={() => setCreated(undefined)}>
            I have saved it
          </button>
        </div>
      )}
      {error && <Notice>{error}</Notice>}
      {keys === undefined && <FirstLoad label="Loading API keys…" failed={error !== undefined} onRetry={load} />}
      {keys && keys.length === 0 && (
        <p class="muted">No API keys yet. Create one for each program that uses the API, so each can be revoked alone.</p>
      )}
      {keys && keys.length > 0 && (
        <ScrollTable label="Your API keys">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.map((key) => (
                <tr key={key.id}>
                  <th scope="row">{key.name}</th>
                  <td class="nowrap">
                    <code>{key.prefix}…</code>
                  </td>
                  <td class="nowrap">{dateFormat.format(new Date(key.createdAt))}</td>
                  <td class="nowrap">{key.lastUsedAt ? dateFormat.format(new Date(key.lastUsedAt)) : 'Never'}</td>
                  <td>
                    <button type="button" class="danger small" aria-label={`Revoke ${key.name}`} onClick={() => revoke(key)}>
                      Revoke
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
