import {
  ServiceValidationError,
  type Webhook,
  type WebhookDelivery,
  type WebhookEventType,
  type WebhookWithSecret,
} from '@deeplink/client';
import { useEffect, useState } from 'preact/hooks';
import { CopyButton, errorText, Notice, ScrollTable } from '../components/common.js';
import { FirstLoad } from '../components/loading.js';
import { api } from '../lib/session.js';

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** The events an endpoint can ask for, in words. */
const EVENTS: readonly { type: WebhookEventType; label: string }[] = [
  { type: 'link.created', label: 'A link is created' },
  { type: 'link.updated', label: 'A link is changed' },
  { type: 'link.deleted', label: 'A link is deleted' },
  { type: 'click', label: 'Clicks (one event per batch counted)' },
];

const DELIVERIES_SHOWN = 20;

/** A secret just made (an endpoint added, or its secret rotated): shown this once, with a copy button. */
function NewSecret({ webhook, onDone }: { webhook: WebhookWithSecret; onDone: () => void }) {
  return (
    <div class="card new-key" role="status">
      <h2>The signing secret of {webhook.url}</h2>
      <p class="warning">
        <strong>Copy it now: it is shown only this once.</strong> Your endpoint checks each delivery's <code>Webhook-Signature</code> with
        it.
        {webhook.previousSecretExpiresAt &&
          ` The old secret keeps signing beside it until ${dateFormat.format(new Date(webhook.previousSecretExpiresAt))}.`}
      </p>
      <p>
        <code data-testid="new-secret">{webhook.secret}</code> <CopyButton text={webhook.secret} label="Copy secret" />
      </p>
      <button type="button" class="secondary small" onClick={onDone}>
        I have saved it
      </button>
    </div>
  );
}

/** An endpoint's delivery log, newest first: what was sent, how it went, and a resend. */
function Deliveries({ webhook }: { webhook: Webhook }) {
  const [deliveries, setDeliveries] = useState<WebhookDelivery[]>();
  const [error, setError] = useState<string>();
  const load = () => {
    setError(undefined);
    return api.webhooks
      .deliveries(webhook.id, { limit: DELIVERIES_SHOWN })
      .then((page) => setDeliveries(page.deliveries))
      .catch((caught) => setError(errorText(caught)));
  };
  useEffect(() => {
    void load();
  }, [webhook.id]);
  const resend = async (delivery: WebhookDelivery) => {
    try {
      await api.webhooks.resend(webhook.id, delivery.id);
      await load();
    } catch (caught) {
      setError(errorText(caught));
    }
  };

  const outcome = (delivery: WebhookDelivery) =>
    delivery.responseStatus !== null
      ? `HTTP ${delivery.responseStatus}`
      : (delivery.error ?? (delivery.status === 'pending' ? 'Waiting' : ''));
  return (
    <>
      <div class="card-head">
        <h3>Deliveries</h3>
        <button type="button" class="secondary small" onClick={() => void load()}>
          Refresh
        </button>
      </div>
      {error && <Notice>{error}</Notice>}
      {deliveries === undefined && <FirstLoad label="Loading deliveries…" failed={error !== undefined} onRetry={load} />}
      {deliveries?.length === 0 && <p class="muted">Nothing sent yet.</p>}
      {deliveries && deliveries.length > 0 && (
        <ScrollTable label={`Deliveries to ${webhook.url}`}>
          <table>
            <thead>
              <tr>
                <th scope="col">Sent</th>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col" class="num">
                  Attempts
                </th>
                <th scope="col">Answer</th>
                <th scope="col" class="num">
                  Took
                </th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {deliveries.map((delivery) => (
                <tr key={delivery.id}>
                  <td class="nowrap">{dateFormat.format(new Date(delivery.createdAt))}</td>
                  <td>
                    <code>{delivery.event}</code>
                  </td>
                  <td>
                    <span class={`badge delivery-${delivery.status}`}>{delivery.status}</span>
                  </td>
                  <td class="num">{delivery.attempts}</td>
                  <td>{outcome(delivery)}</td>
                  <td class="num nowrap">{delivery.durationMs === null ? '' : `${delivery.durationMs} ms`}</td>
                  <td>
                    <button
                      type="button"
                      class="secondary small"
                      aria-label={`Resend the ${delivery.event} event of ${dateFormat.format(new Date(delivery.createdAt))}`}
                      onClick={() => void resend(delivery)}
                    >
                      Resend
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollTable>
      )}
    </>
  );
}

/** One endpoint: its events, on or off, its secret's rotation, delete, and its deliveries. */
function WebhookCard({
  webhook,
  onChange,
  onSecret,
}: {
  webhook: Webhook;
  onChange: () => Promise<void>;
  onSecret: (webhook: WebhookWithSecret) => void;
}) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const id = `webhook-${webhook.id}`;
  const run = async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
      await onChange();
    } catch (caught) {
      setError(errorText(caught));
    } finally {
      setBusy(false);
    }
  };
  const toggleEvent = (type: WebhookEventType, on: boolean) =>
    run(() => api.webhooks.update(webhook.id, { events: on ? [...webhook.events, type] : webhook.events.filter((each) => each !== type) }));
  const rotate = () => {
    if (!confirm(`Make a new signing secret for ${webhook.url}? The old one keeps signing beside it for 24 hours.`)) return;
    return run(async () => onSecret(await api.webhooks.rotateSecret(webhook.id)));
  };
  const remove = () => {
    if (!confirm(`Delete the endpoint ${webhook.url} and its delivery log?`)) return;
    return run(() => api.webhooks.delete(webhook.id));
  };

  return (
    <section class="card" aria-labelledby={`${id}-url`} aria-busy={busy}>
      <div class="card-head">
        <h2 id={`${id}-url`} class="url">
          {webhook.url}
        </h2>
        <span class={`badge ${webhook.enabled ? 'active' : 'pending'}`}>{webhook.enabled ? 'Sending' : 'Paused'}</span>
      </div>
      {webhook.description && <p>{webhook.description}</p>}
      <fieldset class="events">
        <legend>Events sent</legend>
        {EVENTS.map((event) => (
          <label key={event.type} class="check">
            <input
              type="checkbox"
              checked={webhook.events.includes(event.type)}
              disabled={busy || (webhook.events.length === 1 && webhook.events.includes(event.type))}
              onChange={(change) => void toggleEvent(event.type, change.currentTarget.checked)}
            />
            {event.label}
          </label>
        ))}
      </fieldset>
      <div class="toolbar">
        <button
          type="button"
          class="secondary"
          disabled={busy}
          onClick={() => void run(() => api.webhooks.update(webhook.id, { enabled: !webhook.enabled }))}
        >
          {webhook.enabled ? 'Pause' : 'Resume'}
        </button>
        <button type="button" class="secondary" disabled={busy} onClick={rotate}>
          Rotate secret
        </button>
        <button type="button" class="danger" disabled={busy} onClick={remove}>
          Delete endpoint
        </button>
      </div>
      {error && <Notice>{error}</Notice>}
      <Deliveries webhook={webhook} />
    </section>
  );
}

/** Webhooks: endpoints that receive the account's events, signed; each with its secret and delivery log. */
export function WebhooksPage() {
  const [webhooks, setWebhooks] = useState<Webhook[]>();
  const [secret, setSecret] = useState<WebhookWithSecret>();
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<WebhookEventType[]>(EVENTS.map((event) => event.type));
  const [error, setError] = useState<string>();
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const load = () => {
    setError(undefined);
    return api.webhooks
      .list()
      .then(setWebhooks)
      .catch((caught) => setError(errorText(caught)));
  };
  useEffect(() => {
    void load();
  }, []);

  const add = async (event: SubmitEvent) => {
    event.preventDefault();
    setError(undefined);
    setFieldErrors({});
    try {
      const created = await api.webhooks.create({
        url: url.trim(),
        events,
        ...(description.trim() && { description: description.trim() }),
      });
      setSecret(created);
      setUrl('');
      setDescription('');
      await load();
    } catch (caught) {
      if (caught instanceof ServiceValidationError)
        setFieldErrors(Object.fromEntries(caught.details.map((detail) => [detail.field, detail.message])));
      setError(errorText(caught));
    }
  };
  const fieldError = (name: string, label: string) =>
    fieldErrors[name] && (
      <p class="field-error" id={`webhook-${name}-error`}>
        {label} {fieldErrors[name]}
      </p>
    );

  return (
    <section>
      <h1>Webhooks</h1>
      <p class="muted">
        Each endpoint receives the events it asks for as signed JSON POSTs, retried with back-off when it does not answer 2xx. How to check
        a signature: the API reference and docs/webhooks.md.
      </p>
      <form class="card" onSubmit={add} aria-labelledby="add-webhook">
        <h2 id="add-webhook">Add an endpoint</h2>
        <div class="field">
          <label for="webhook-url">Endpoint URL</label>
          <input
            id="webhook-url"
            type="url"
            required
            value={url}
            placeholder="https://example.com/hooks/deeplink"
            aria-invalid={fieldErrors.url ? true : undefined}
            aria-describedby={fieldErrors.url ? 'webhook-url-error' : undefined}
            onInput={(input) => setUrl(input.currentTarget.value)}
          />
          {fieldError('url', 'The URL')}
        </div>
        <div class="field">
          <label for="webhook-description">Description (optional)</label>
          <input
            id="webhook-description"
            value={description}
            maxLength={200}
            onInput={(input) => setDescription(input.currentTarget.value)}
          />
        </div>
        <fieldset class="events" aria-describedby={fieldErrors.events ? 'webhook-events-error' : undefined}>
          <legend>Events</legend>
          {EVENTS.map((option) => (
            <label key={option.type} class="check">
              <input
                type="checkbox"
                checked={events.includes(option.type)}
                onChange={(change) =>
                  setEvents(change.currentTarget.checked ? [...events, option.type] : events.filter((each) => each !== option.type))
                }
              />
              {option.label}
            </label>
          ))}
          {fieldError('events', 'The events')}
        </fieldset>
        <button type="submit">Add endpoint</button>
      </form>
      {secret && <NewSecret webhook={secret} onDone={() => setSecret(undefined)} />}
      {error && <Notice>{error}</Notice>}
      {webhooks === undefined && <FirstLoad label="Loading webhooks…" failed={error !== undefined} onRetry={load} />}
      {webhooks?.length === 0 && <p class="muted">No endpoints yet.</p>}
      {webhooks?.map((webhook) => (
        <WebhookCard key={webhook.id} webhook={webhook} onChange={load} onSecret={setSecret} />
      ))}
    </section>
  );
}
