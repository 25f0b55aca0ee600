import { type Domain, ServiceValidationError } from '@deeplink/client';
import { useEffect, useState } from 'preact/hooks';
import { CopyButton, errorText, Notice } from '../components/common.js';
import { FirstLoad } from '../components/loading.js';
import { api } from '../lib/session.js';

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** What a domain's status means for its links, in a few words. */
function statusText(domain: Domain): string {
  if (domain.status === 'active') {
    return domain.verificationLostAt
      ? `Active, but the TXT record has been missing since ${dateFormat.format(new Date(domain.verificationLostAt))}: put it back`
      : 'Active: links can use it';
  }
  return 'Pending: publish the TXT record, then check again';
}

/** One domain: its TXT record to publish, its status with a re-check, its not-found URL, delete. */
function DomainCard({ domain, onChange }: { domain: Domain; onChange: () => Promise<void> }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [notFoundUrl, setNotFoundUrl] = useState(domain.notFoundUrl ?? '');
  const [saved, setSaved] = useState(false);
  const id = `domain-${domain.id}`;

  const run = async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    setSaved(false);
    try {
      await action();
      await onChange();
    } catch (caught) {
      setError(errorText(caught));
    } finally {
      setBusy(false);
    }
  };
  const verify = () => run(() => api.domains.verify(domain.id));
  const saveNotFound = (event: SubmitEvent) => {
    event.preventDefault();
    return run(async () => {
      await api.domains.update(domain.id, { notFoundUrl: notFoundUrl.trim() === '' ? null : notFoundUrl.trim() });
      setSaved(true);
    });
  };
  const remove = () => {
    if (!confirm(`Delete ${domain.hostname}? A domain that links still use cannot be deleted: delete those links first.`)) return;
    return run(() => api.domains.delete(domain.id));
  };

  return (
    <section class="card" aria-labelledby={`${id}-name`} aria-busy={busy}>
      <div class="card-head">
        <h2 id={`${id}-name`}>{domain.hostname}</h2>
        <span class={`badge ${domain.status}`}>{domain.status === 'active' ? 'Active' : 'Pending'}</span>
      </div>
      <p role="status">{statusText(domain)}</p>
      <h3>DNS record</h3>
      <dl class="record">
        <dt>Type</dt>
        <dd>
          <code>{domain.verification.type}</code>
        </dd>
        <dt>Name</dt>
        <dd>
          <code>{domain.verification.name}</code> <CopyButton text={domain.verification.name} label="Copy name" />
        </dd>
        <dt>Value</dt>
        <dd>
          <code>{domain.verification.value}</code> <CopyButton text={domain.verification.value} label="Copy value" />
        </dd>
      </dl>
      <p class="muted">
        Point the domain itself at the redirector (an A/AAAA or CNAME record), as for any web site.
        {domain.lastCheckedAt && ` Last checked ${dateFormat.format(new Date(domain.lastCheckedAt))}.`}
      </p>
      <div class="toolbar">
        <button type="button" onClick={verify} disabled={busy}>
          {domain.status === 'active' ? 'Check again' : 'Verify now'}
        </button>
        <button type="button" class="danger" onClick={remove} disabled={busy}>
          Delete domain
        </button>
      </div>
      <form class="toolbar" onSubmit={saveNotFound}>
        <div class="field inline">
          <label for={`${id}-not-found`}>Unknown codes go to</label>
          <input
            id={`${id}-not-found`}
            type="url"
            value={notFoundUrl}
            placeholder="https://example.com/ (empty: the 404 page)"
            onInput={(event) => setNotFoundUrl(event.currentTarget.value)}
          />
        </div>
        <button type="submit" class="secondary" disabled={busy}>
          Save
        </button>
        {saved && (
          <span class="muted" role="status">
            Saved
          </span>
        )}
      </form>
      {error && <Notice>{error}</Notice>}
    </section>
  );
}

/** Custom domains: add one, publish its TXT record, verify it, set where unknown codes go, delete it. */
export function DomainsPage() {
  const [domains, setDomains] = useState<Domain[]>();
  const [hostname, setHostname] = useState('');
  const [error, setError] = useState<string>();
  const [fieldError, setFieldError] = useState<string>();
  const load = () => {
    setError(undefined);
    return api.domains
      .list()
      .then(setDomains)
      .catch((caught) => setError(errorText(caught)));
  };
  useEffect(() => {
    void load();
  }, []);

  const add = async (event: SubmitEvent) => {
    event.preventDefault();
    setError(undefined);
    setFieldError(undefined);
    try {
      await api.domains.create({ hostname: hostname.trim().toLowerCase() });
      setHostname('');
      await load();
    } catch (caught) {
      if (caught instanceof ServiceValidationError && caught.details.some((detail) => detail.field === 'hostname')) {
        setFieldError(caught.details.find((detail) => detail.field === 'hostname')!.message);
        document.getElementById('domain-hostname')?.focus();
      } else {
        setError(errorText(caught));
      }
    }
  };

  return (
    <section>
      <h1>Domains</h1>
      <p class="muted">
        Short links on your own domain, like go.example.com/spring. Add it, prove it is yours with a TXT record, then pick it when you make
        a link.
      </p>
      <form class="toolbar card" onSubmit={add} noValidate>
        <div class="field inline">
          <label for="domain-hostname">Domain</label>
          <input
            id="domain-hostname"
            value={hostname}
            required
            placeholder="go.example.com"
            autocomplete="off"
            aria-invalid={fieldError ? true : undefined}
            aria-describedby={fieldError ? 'domain-hostname-error' : undefined}
            onInput={(event) => {
              setHostname(event.currentTarget.value);
              setFieldError(undefined);
            }}
          />
          {fieldError && (
            <span id="domain-hostname-error" class="field-error">
              {fieldError}
            </span>
          )}
        </div>
        <button type="submit">Add domain</button>
      </form>
      {error && <Notice>{error}</Notice>}
      {domains === undefined && <FirstLoad label="Loading domains…" failed={error !== undefined} onRetry={load} />}
      {domains && domains.length === 0 && <p class="muted">No domains yet: links use the service's own domain.</p>}
      {domains?.map((domain) => (
        <DomainCard key={domain.id} domain={domain} onChange={load} />
      ))}
    </section>
  );
}
