import { ServiceValidationError } from '@deeplink/client';
import { useState } from 'preact/hooks';
import { AppLink, errorText, Notice } from '../components/common.js';
import { api, currentSession, signIn, signOut } from '../lib/session.js';
import { navigate } from '../lib/router.js';

/** The account: who is signed in, a new password, signing out everywhere, and the API keys. */
export function AccountPage() {
  const session = currentSession()!;
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string>();
  const [changed, setChanged] = useState(false);

  const changePassword = async (event: SubmitEvent) => {
    event.preventDefault();
    setError(undefined);
    setErrors({});
    setChanged(false);
    try {
      // Every earlier login token ends; this tab goes on with the new one.
      const result = await api.auth.changePassword({ currentPassword: current, newPassword: next });
      signIn({ token: result.token, user: result.user });
      setCurrent('');
      setNext('');
      setChanged(true);
    } catch (caught) {
      if (caught instanceof ServiceValidationError && caught.details.length > 0) {
        const byField = Object.fromEntries(caught.details.map((detail) => [detail.field, detail.message]));
        setErrors(byField);
        document.getElementById(byField.currentPassword ? 'current-password' : 'new-password')?.focus();
      } else {
        setError(errorText(caught));
      }
    }
  };

  const signOutEverywhere = async () => {
    if (!confirm('Sign out on every device and browser, this one included? API keys keep working.')) return;
    try {
      await api.auth.logoutAll();
      signOut();
      navigate('/', { replace: true });
    } catch (caught) {
      setError(errorText(caught));
    }
  };

  const described = (field: string) => (errors[field] ? `${field}-error` : undefined);
  return (
    <section>
      <h1>Account</h1>
      <p>
        Signed in as <strong>{session.user.name}</strong> ({session.user.email}).
      </p>
      {error && <Notice>{error}</Notice>}
      <form class="card" onSubmit={changePassword} noValidate aria-labelledby="password-heading">
        <h2 id="password-heading">Change password</h2>
        <div class="field">
          <label for="current-password">Current password</label>
          <input
            id="current-password"
            type="password"
            autocomplete="current-password"
            required
            value={current}
            aria-invalid={errors.currentPassword ? true : undefined}
            aria-describedby={described('currentPassword')}
            onInput={(event) => {
              setCurrent(event.currentTarget.value);
              setErrors(({ currentPassword: _, ...rest }) => rest);
            }}
          />
          {errors.currentPassword && (
            <span id="currentPassword-error" class="field-error">
              {errors.currentPassword}
            </span>
          )}
        </div>
        <div class="field">
          <label for="new-password">New password</label>
          <input
            id="new-password"
            type="password"
            autocomplete="new-password"
            required
            minLength={8}
            value={next}
            aria-invalid={errors.newPassword ? true : undefined}
            aria-describedby={described('newPassword')}
            onInput={(event) => {
              setNext(event.currentTarget.value);
              setErrors(({ newPassword: _, ...rest }) => rest);
            }}
          />
          {errors.newPassword && (
            <span id="newPassword-error" class="field-error">
              {errors.newPassword}
            </span>
          )}
        </div>
        <button type="submit">Change password</button>
        {changed && (
          <p class="notice info" role="status">
            Password changed. Every other session has been signed out.
          </p>
        )}
      </form>
      <section class="card" aria-labelledby="sessions-heading">
        <h2 id="sessions-heading">Sessions</h2>
        <p>Lost a laptop, or signed in on a shared computer? End every session of this account at once.</p>
        <button type="button" class="danger" onClick={signOutEverywhere}>
          Sign out everywhere
        </button>
      </section>
      <section class="card" aria-labelledby="keys-heading">
        <h2 id="keys-heading">API keys</h2>
        <p>
          Programs use API keys instead of your password: <AppLink href="/api-keys">manage your API keys</AppLink>.
        </p>
      </section>
    </section>
  );
}
