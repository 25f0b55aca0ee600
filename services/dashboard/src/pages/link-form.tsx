import { ServiceValidationError, type Domain, type Link, type SlugAvailability } from '@deeplink/client';
import { useEffect, useState } from 'preact/hooks';
import { AppLink, errorText, LoadFailed, Notice } from '../components/common.js';
import { Skeleton } from '../components/loading.js';
import {
  createInput,
  fieldErrors,
  formValues,
  isPast,
  updateInput,
  UTM_FIELDS,
  UTM_KEYS,
  withSchemes,
  type LinkFormValues,
} from '../lib/link-form.js';
import { navigate } from '../lib/router.js';
import { api } from '../lib/session.js';

type Errors = Record<string, string>;

/** One labelled input, named after the API's field path so the API's `details[].field` finds it. */
function Field({
  name,
  label,
  value,
  onInput,
  errors,
  type = 'text',
  hint,
  required,
  warning,
  autocomplete,
}: {
  name: string;
  label: string;
  value: string;
  onInput: (value: string) => void;
  errors: Errors;
  type?: string;
  hint?: string;
  required?: boolean;
  /** Something to know about the value that is not an error (a date in the past). */
  warning?: string;
  /** The browser's autofill hint: `new-password` keeps the account's own password out of a link's. */
  autocomplete?: string;
}) {
  const id = `field-${name.replace(/\./g, '-')}`;
  const error = errors[name];
  const described = [hint && `${id}-hint`, warning && `${id}-warning`, error && `${id}-error`].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={id}>
        {label}
        {required && <span aria-hidden="true"> *</span>}
      </label>
      <input
        id={id}
        name={name}
        type={type}
        value={value}
        required={required}
        autocomplete={autocomplete}
        aria-invalid={error ? true : undefined}
        aria-describedby={described}
        onInput={(event) => onInput(event.currentTarget.value)}
      />
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {warning && (
        <p class="warning" id={`${id}-warning`}>
          {warning}
        </p>
      )}
      {error && (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}

/** What the back-half field says as it is typed: checking, free (with the short URL), taken, or why not. */
type SlugState =
  | { kind: 'idle' }
  | { kind: 'checking' }
  | { kind: 'answer'; answer: SlugAvailability }
  | { kind: 'invalid'; message: string };

/**
 * Where a new link lives: a domain (the default one or an active custom domain) and a back-half,
 * checked as it is typed, with the short URL it gives.
 */
function PlaceFields({
  values,
  set,
  errors,
}: {
  values: LinkFormValues;
  set: (key: 'slug' | 'domain', value: string) => void;
  errors: Errors;
}) {
  const [domains, setDomains] = useState<Domain[]>([]);
  const [state, setState] = useState<SlugState>({ kind: 'idle' });
  useEffect(() => {
    api.domains
      .list()
      .then((all) => setDomains(all.filter((domain) => domain.status === 'active')))
      .catch(() => setDomains([]));
  }, []);
  useEffect(() => {
    const slug = values.slug.trim();
    if (slug === '') return setState({ kind: 'idle' });
    setState({ kind: 'checking' });
    // Asked once typing pauses; an answer to an older value is dropped.
    let current = true;
    const timer = setTimeout(() => {
      api.links
        .slugAvailability(slug, values.domain || undefined)
        .then((answer) => current && setState({ kind: 'answer', answer }))
        .catch((caught) => {
          if (!current) return;
          const detail = caught instanceof ServiceValidationError ? caught.details[0] : undefined;
          setState({
            kind: 'invalid',
            message: detail ? `${detail.field === 'slug' ? 'The back-half' : 'The domain'} ${detail.message}` : errorText(caught),
          });
        });
    }, 300);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [values.slug, values.domain]);

  const status =
    state.kind === 'checking'
      ? 'Checking…'
      : state.kind === 'invalid'
        ? state.message
        : state.kind === 'answer'
          ? state.answer.available
            ? `Free. The short link: ${state.answer.url}`
            : `Taken on this domain: pick another back-half.`
          : 'Leave empty for a random code.';
  const bad = state.kind === 'invalid' || (state.kind === 'answer' && !state.answer.available);
  return (
    <div class="place">
      <div class="field">
        <label for="field-domain">Domain</label>
        <select id="field-domain" name="domain" value={values.domain} onChange={(event) => set('domain', event.currentTarget.value)}>
          <option value="">The default domain</option>
          {domains.map((domain) => (
            <option key={domain.id} value={domain.hostname}>
              {domain.hostname}
            </option>
          ))}
        </select>
        {errors.domain && (
          <p class="field-error" id="field-domain-error">
            {errors.domain}
          </p>
        )}
      </div>
      <div class="field">
        <label for="field-slug">Back-half</label>
        <input
          id="field-slug"
          name="slug"
          value={values.slug}
          autocomplete="off"
          spellcheck={false}
          placeholder="spring-sale"
          aria-invalid={errors.slug || bad ? true : undefined}
          aria-describedby="field-slug-status"
          onInput={(event) => set('slug', event.currentTarget.value)}
        />
        <p id="field-slug-status" class={bad || errors.slug ? 'field-error' : 'hint'} aria-live="polite">
          {errors.slug ? `The back-half ${errors.slug}` : status}
        </p>
      </div>
    </div>
  );
}

/** Create a link, or edit one (`id`): the same form; an edit sends only what changed. */
export function LinkFormPage({ id }: { id?: string }) {
  const [link, setLink] = useState<Link>();
  const [values, setValues] = useState<LinkFormValues>(formValues());
  const [errors, setErrors] = useState<Errors>({});
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (!id) return;
    api.links
      .get(id)
      .then((loaded) => {
        setLink(loaded);
        setValues(formValues(loaded));
      })
      .catch((caught) => setError(errorText(caught)));
  }, [id]);

  const set = <K extends keyof LinkFormValues>(key: K, value: LinkFormValues[K]) => setValues((current) => ({ ...current, [key]: value }));
  const setAndroid = (key: keyof LinkFormValues['android']) => (value: string) => set('android', { ...values.android, [key]: value });
  const setIos = (key: keyof LinkFormValues['ios']) => (value: string) => set('ios', { ...values.ios, [key]: value });
  const setPreview = (key: keyof LinkFormValues['preview']) => (value: string) => set('preview', { ...values.preview, [key]: value });
  const setParameter = (index: number, row: { key: string; value: string }) =>
    set(
      'parameters',
      values.parameters.map((current, at) => (at === index ? row : current)),
    );
  const utmValue = (field: string) => values.parameters.find((row) => row.key === `utm_${field}`)?.value ?? '';
  const setUtm = (field: string) => (value: string) => {
    const key = `utm_${field}`;
    const exists = values.parameters.some((row) => row.key === key);
    set(
      'parameters',
      value === ''
        ? values.parameters.filter((row) => row.key !== key)
        : exists
          ? values.parameters.map((row) => (row.key === key ? { key, value } : row))
          : [...values.parameters, { key, value }],
    );
  };

  /** A field's error goes as soon as the field is edited (inputs are named after the API's fields). */
  const clearErrorOf = (event: Event) => {
    const { name } = event.target as HTMLInputElement;
    if (!name) return;
    const key = name.startsWith('customParameters') ? 'customParameters' : name;
    setErrors((current) => {
      if (!(key in current)) return current;
      const { [key]: _, ...rest } = current;
      return rest;
    });
  };

  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    setBusy(true);
    setErrors({});
    setError(undefined);
    // Addresses typed without a scheme get https://, and the form shows what is sent.
    const sent = withSchemes(values);
    setValues(sent);
    try {
      let saved: Link;
      if (link) {
        const changes = updateInput(link, sent);
        saved = Object.keys(changes).length === 0 ? link : await api.links.update(link.id, changes);
      } else {
        saved = await api.links.create(createInput(sent));
      }
      navigate(`/links/${saved.id}`);
    } catch (caught) {
      if (caught instanceof ServiceValidationError && caught.details.length > 0) {
        setErrors(fieldErrors(caught.details));
        setError('Some fields need attention: see the messages next to them.');
        // Once they are drawn: the first field in error gets the focus, so the keyboard is there.
        requestAnimationFrame(() => document.querySelector<HTMLElement>('.link-form [aria-invalid="true"]')?.focus());
      } else {
        setError(errorText(caught));
      }
    } finally {
      setBusy(false);
    }
  };

  if (id && !link) {
    if (!error) return <Skeleton label="Loading the link…" lines={6} />;
    return <LoadFailed title="This link cannot be edited" message={error} back={{ href: '/links', label: 'Back to your links' }} />;
  }
  const otherErrors = Object.entries(errors).filter(([field]) => !KNOWN_FIELDS.has(field));
  return (
    <section>
      <div class="page-head">
        <h1>{link ? `Edit “${link.title}”` : 'New link'}</h1>
        {link && <AppLink href={`/links/${link.id}`}>Back to the link</AppLink>}
      </div>
      <form class="link-form" onSubmit={submit} onInput={clearErrorOf} onChange={clearErrorOf} noValidate>
        <fieldset class="card">
          <legend>Link</legend>
          {link ? (
            <p class="hint">
              Short link: <code>{link.url}</code> (its domain and back-half stay as they are)
            </p>
          ) : (
            <PlaceFields values={values} set={set} errors={errors} />
          )}
          <Field name="title" label="Title" value={values.title} onInput={(value) => set('title', value)} errors={errors} required />
          <Field
            name="defaultUrl"
            label="Default URL"
            type="url"
            value={values.defaultUrl}
            onInput={(value) => set('defaultUrl', value)}
            errors={errors}
            required
            hint="Where every visitor goes when no platform below applies."
          />
          <Field
            name="desktopUrl"
            label="Desktop URL"
            type="url"
            value={values.desktopUrl}
            onInput={(value) => set('desktopUrl', value)}
            errors={errors}
          />
          <Field
            name="expirationDate"
            label="Expiration date"
            type="datetime-local"
            value={values.expirationDate}
            onInput={(value) => set('expirationDate', value)}
            errors={errors}
            hint="In your time zone. Leave empty for a link that never expires."
            warning={isPast(values.expirationDate) ? 'This moment has passed: the link will be expired as soon as it is saved.' : undefined}
          />
          <Field
            name="expiredUrl"
            label="After expiry, send visitors to"
            type="url"
            value={values.expiredUrl}
            onInput={(value) => set('expiredUrl', value)}
            errors={errors}
            hint="Without it an expired link answers “link expired”."
          />
          <Field
            name="tags"
            label="Tags"
            value={values.tags}
            onInput={(value) => set('tags', value)}
            errors={errors}
            hint="Separated by commas: spring, email"
          />
        </fieldset>
        <fieldset class="card">
          <legend>Password and click cap</legend>
          <Field
            name="password"
            label={link?.passwordProtected ? 'New password' : 'Password'}
            type="password"
            autocomplete="new-password"
            value={values.password}
            onInput={(value) => set('password', value)}
            errors={errors}
            hint={
              link?.passwordProtected
                ? 'This link asks for a password. Type a new one to replace it; leave empty to keep it.'
                : 'Visitors type it before they are sent on; a click counts once it is right. Leave empty for an open link.'
            }
          />
          {link?.passwordProtected && (
            <label class="check">
              <input
                type="checkbox"
                checked={values.removePassword}
                disabled={values.password !== ''}
                onChange={(event) => set('removePassword', event.currentTarget.checked)}
              />
              Remove the password
            </label>
          )}
          <Field
            name="clickCap"
            label="Click cap"
            type="number"
            value={values.clickCap}
            onInput={(value) => set('clickCap', value)}
            errors={errors}
            hint="After this many clicks, visitors go to the address below. Leave empty for no cap."
          />
          <Field
            name="capOverflowUrl"
            label="Past the cap, send visitors to"
            type="url"
            value={values.capOverflowUrl}
            onInput={(value) => set('capOverflowUrl', value)}
            errors={errors}
            hint="Without it, visitors past the cap get “link expired”."
          />
        </fieldset>
        <div class="platforms">
          <fieldset class="card">
            <legend>Android</legend>
            <Field
              name="androidLink.url"
              label="App link URL"
              value={values.android.url}
              onInput={setAndroid('url')}
              errors={errors}
              hint="e.g. shop://sale"
            />
            <Field
              name="androidLink.appPackageName"
              label="Package name"
              value={values.android.appPackageName}
              onInput={setAndroid('appPackageName')}
              errors={errors}
              hint="e.g. com.example.shop"
            />
            <Field
              name="androidLink.minimumVersion"
              label="Minimum version"
              value={values.android.minimumVersion}
              onInput={setAndroid('minimumVersion')}
              errors={errors}
            />
            <Field
              name="androidLink.fallbackUrl"
              label="Fallback URL"
              type="url"
              value={values.android.fallbackUrl}
              onInput={setAndroid('fallbackUrl')}
              errors={errors}
            />
          </fieldset>
          <fieldset class="card">
            <legend>iOS</legend>
            <Field
              name="iosLink.url"
              label="App link URL"
              value={values.ios.url}
              onInput={setIos('url')}
              errors={errors}
              hint="e.g. shop://sale"
            />
            <Field
              name="iosLink.bundleId"
              label="Bundle ID"
              value={values.ios.bundleId}
              onInput={setIos('bundleId')}
              errors={errors}
              hint="e.g. com.example.shop"
            />
            <Field
              name="iosLink.minimumVersion"
              label="Minimum version"
              value={values.ios.minimumVersion}
              onInput={setIos('minimumVersion')}
              errors={errors}
            />
            <Field
              name="iosLink.fallbackUrl"
              label="Fallback URL"
              type="url"
              value={values.ios.fallbackUrl}
              onInput={setIos('fallbackUrl')}
              errors={errors}
            />
          </fieldset>
        </div>
        <fieldset class="card">
          <legend>Social preview</legend>
          <p class="hint">What chat apps and social networks show when the link is shared.</p>
          <Field
            name="socialPreview.title"
            label="Preview title"
            value={values.preview.title}
            onInput={setPreview('title')}
            errors={errors}
          />
          <Field
            name="socialPreview.description"
            label="Preview description"
            value={values.preview.description}
            onInput={setPreview('description')}
            errors={errors}
          />
          <Field
            name="socialPreview.imageUrl"
            label="Preview image URL"
            type="url"
            value={values.preview.imageUrl}
            onInput={setPreview('imageUrl')}
            errors={errors}
          />
        </fieldset>
        <fieldset class="card">
          <legend>Custom parameters</legend>
          <p class="hint">Added to the destination's query string. The UTM fields fill in the usual campaign parameters.</p>
          <div class="utm">
            {UTM_FIELDS.map((field) => (
              <Field key={field} name={`utm-${field}`} label={`UTM ${field}`} value={utmValue(field)} onInput={setUtm(field)} errors={{}} />
            ))}
          </div>
          <table class="parameters">
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Value</th>
                <th scope="col">
                  <span class="visually-hidden">Remove</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {values.parameters.map((row, index) =>
                UTM_KEYS.has(row.key.trim()) ? null : (
                  <tr key={index}>
                    <td>
                      <input
                        aria-label={`Parameter ${index + 1} key`}
                        value={row.key}
                        onInput={(event) => setParameter(index, { ...row, key: event.currentTarget.value })}
                      />
                    </td>
                    <td>
                      <input
                        aria-label={`Parameter ${index + 1} value`}
                        value={row.value}
                        onInput={(event) => setParameter(index, { ...row, value: event.currentTarget.value })}
                      />
                    </td>
                    <td>
                      <button
                        type="button"
                        class="secondary small"
                        aria-label={`Remove parameter ${row.key || index + 1}`}
                        onClick={() =>
                          set(
                            'parameters',
                            values.parameters.filter((_, at) => at !== index),
                          )
                        }
                      >
                        Remove
                      </button>
                    </td>
                  </tr>
                ),
              )}
            </tbody>
          </table>
          <button type="button" class="secondary small" onClick={() => set('parameters', [...values.parameters, { key: '', value: '' }])}>
            Add parameter
          </button>
          {errors.customParameters && (
            <p class="field-error" role="alert">
              {errors.customParameters}
            </p>
          )}
        </fieldset>
        {otherErrors.map(([field, message]) => (
          <Notice key={field}>
            {field}: {message}
          </Notice>
        ))}
        {error && <Notice>{error}</Notice>}
        <div class="form-actions">
          <button type="submit" disabled={busy}>
            {link ? 'Save changes' : 'Create link'}
          </button>
          <AppLink href={link ? `/links/${link.id}` : '/links'} class="button secondary">
            Cancel
          </AppLink>
        </div>
      </form>
    </section>
  );
}

/** Fields with a place of their own in the form; errors for any other go above the buttons. */
const KNOWN_FIELDS = new Set([
  'slug',
  'domain',
  'title',
  'defaultUrl',
  'desktopUrl',
  'expirationDate',
  'expiredUrl',
  'tags',
  'password',
  'clickCap',
  'capOverflowUrl',
  'customParameters',
  ...['title', 'description', 'imageUrl'].map((key) => `socialPreview.${key}`),
  ...['url', 'appPackageName', 'minimumVersion', 'fallbackUrl'].map((key) => `androidLink.${key}`),
  ...['url', 'bundleId', 'minimumVersion', 'fallbackUrl'].map((key) => `iosLink.${key}`),
]);
