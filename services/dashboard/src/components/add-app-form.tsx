import { type AppWithKey, type CreateAppInput, ServiceValidationError } from '@deeplink/client';
import { useState } from 'preact/hooks';
import { errorText, Notice } from './common.js';
import { api } from '../lib/session.js';

type Platform = 'ios' | 'android';

/** One labelled input of the form, its error (by the API's field name) under it. */
function Input({
  name,
  label,
  value,
  onInput,
  error,
  hint,
  multiline,
}: {
  name: string;
  label: string;
  value: string;
  onInput: (value: string) => void;
  error?: string;
  hint?: string;
  multiline?: boolean;
}) {
  const id = `app-${name}`;
  const described = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ') || undefined;
  const props = {
    id,
    name,
    value,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': described,
    onInput: (event: Event) => onInput((event.currentTarget as HTMLInputElement).value),
  };
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {multiline ? <textarea rows={3} {...props} /> : <input {...props} autocomplete="off" spellcheck={false} />}
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
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

/** Registers an iOS or Android app; `onAdded` gets it with its app key, which is shown only then. */
export function AddAppForm({ onAdded }: { onAdded: (app: AppWithKey) => void }) {
  const [platform, setPlatform] = useState<Platform>('ios');
  const [fields, setFields] = useState({ name: '', teamId: '', bundleId: '', appStoreId: '', packageName: '', sha256CertFingerprints: '' });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string>();
  const set = (key: keyof typeof fields) => (value: string) => {
    setFields((current) => ({ ...current, [key]: value }));
    setErrors(({ [key]: _, ...rest }) => rest);
  };

  const input = (): CreateAppInput => {
    const name = fields.name.trim() || undefined;
    if (platform === 'ios') {
      return {
        platform,
        name,
        teamId: fields.teamId.trim(),
        bundleId: fields.bundleId.trim(),
        appStoreId: fields.appStoreId.trim() || undefined,
      };
    }
    const sha256CertFingerprints = fields.sha256CertFingerprints.split(/[\s,]+/).filter(Boolean);
    return { platform, name, packageName: fields.packageName.trim(), sha256CertFingerprints };
  };

  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    setError(undefined);
    setErrors({});
    try {
      onAdded(await api.apps.create(input()));
      setFields({ name: '', teamId: '', bundleId: '', appStoreId: '', packageName: '', sha256CertFingerprints: '' });
    } catch (caught) {
      if (caught instanceof ServiceValidationError && caught.details.length > 0) {
        // A fingerprint's error (sha256CertFingerprints.1) goes under the fingerprints.
        setErrors(Object.fromEntries(caught.details.map(({ field, message }) => [field.split('.')[0]!, message])));
        requestAnimationFrame(() => document.querySelector<HTMLElement>('.add-app [aria-invalid="true"]')?.focus());
      } else {
        setError(errorText(caught));
      }
    }
  };

  return (
    <form class="card add-app" onSubmit={submit} noValidate aria-labelledby="add-app-heading">
      <h2 id="add-app-heading">Add an app</h2>
      <fieldset class="choice">
        <legend>Platform</legend>
        {(['ios', 'android'] as const).map((choice) => (
          <label key={choice}>
            <input type="radio" name="platform" value={choice} checked={platform === choice} onChange={() => setPlatform(choice)} />{' '}
            {choice === 'ios' ? 'iOS' : 'Android'}
          </label>
        ))}
      </fieldset>
      <Input
        name="name"
        label="Name (optional)"
        value={fields.name}
        onInput={set('name')}
        error={errors.name}
        hint="Shown to visitors: “Open in …”"
      />
      {platform === 'ios' ? (
        <>
          <Input
            name="teamId"
            label="Team ID"
            value={fields.teamId}
            onInput={set('teamId')}
            error={errors.teamId}
            hint="Ten characters, from the Apple developer account"
          />
          <Input
            name="bundleId"
            label="Bundle ID"
            value={fields.bundleId}
            onInput={set('bundleId')}
            error={errors.bundleId}
            hint="e.g. com.example.shop"
          />
          <Input
            name="appStoreId"
            label="App Store ID (optional)"
            value={fields.appStoreId}
            onInput={set('appStoreId')}
            error={errors.appStoreId}
            hint="The number in the App Store address, where visitors without the app are sent"
          />
        </>
      ) : (
        <>
          <Input
            name="packageName"
            label="Package name"
            value={fields.packageName}
            onInput={set('packageName')}
            error={errors.packageName}
            hint="e.g. com.example.shop"
          />
          <Input
            name="sha256CertFingerprints"
            label="SHA-256 certificate fingerprints"
            value={fields.sha256CertFingerprints}
            onInput={set('sha256CertFingerprints')}
            error={errors.sha256CertFingerprints}
            hint="One per line, as keytool -list -v prints them (AB:CD:…)"
            multiline
          />
        </>
      )}
      {error && <Notice>{error}</Notice>}
      <button type="submit">Add app</button>
    </form>
  );
}
