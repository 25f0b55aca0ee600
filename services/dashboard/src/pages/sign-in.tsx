import { ServiceValidationError } from '@deeplink/client';
import { useState } from 'preact/hooks';
import { errorText, Notice } from '../components/common.js';
import { api, signIn } from '../lib/session.js';

/** Sign in, or create an account: the same form, with a name when creating. */
export function SignInPage() {
  const [mode, setMode] = useState<'sign-in' | 'create'>('sign-in');
  const [error, setError] = useState<string>();
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);

  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const email = String(form.get('email'));
    const password = String(form.get('password'));
    setBusy(true);
    setError(undefined);
    setFieldErrors({});
    try {
      const result =
        mode === 'create'
          ? await api.auth.register({ name: String(form.get('name')), email, password })
          : await api.auth.login({ email, password });
      signIn({ token: result.token, user: result.user });
    } catch (caught) {
      if (caught instanceof ServiceValidationError && caught.details.length > 0) {
        setFieldErrors(Object.fromEntries(caught.details.map((detail) => [detail.field, detail.message])));
      }
      setError(errorText(caught));
    } finally {
      setBusy(false);
    }
  };

  const field = (name: string, label: string, type: string, autocomplete: string) => (
    <div class="field">
      <label for={`auth-${name}`}>{label}</label>
      <input
        id={`auth-${name}`}
        name={name}
        type={type}
        required
        autocomplete={autocomplete}
        aria-invalid={fieldErrors[name] ? true : undefined}
        aria-describedby={fieldErrors[name] ? `auth-${name}-error` : undefined}
        minLength={name === 'password' && mode === 'create' ? 8 : undefined}
      />
      {fieldErrors[name] && (
        <p class="field-error" id={`auth-${name}-error`}>
          {fieldErrors[name]}
        </p>
      )}
    </div>
  );

  return (
    <section class="card auth">
      <h1>{mode === 'create' ? 'Create an account' : 'Sign in'}</h1>
      <form onSubmit={submit}>
        {mode === 'create' && field('name', 'Name', 'text', 'name')}
        {field('email', 'Email', 'email', 'email')}
        {field('password', 'Password', 'password', mode === 'create' ? 'new-password' : 'current-password')}
        {error && <Notice>{error}</Notice>}
        <button type="submit" disabled={busy}>
          {mode === 'create' ? 'Create account' : 'Sign in'}
        </button>
      </form>
      <p class="switch">
        {mode === 'create' ? 'Already have an account? ' : 'New here? '}
        <button type="button" class="link" onClick={() => setMode(mode === 'create' ? 'sign-in' : 'create')}>
          {mode === 'create' ? 'Sign in' : 'Create account'}
        </button>
      </p>
    </section>
  );
}
