import { useEffect, useState } from 'preact/hooks';
import { AppLink } from './components/common.js';
import { currentSession, onSessionChange, signOut, type Session } from './lib/session.js';
import { matchPath, navigate, useLocation } from './lib/router.js';
import { AccountPage } from './pages/account.js';
import { ApiKeysPage } from './pages/api-keys.js';
import { DomainsPage } from './pages/domains.js';
import { WebhooksPage } from './pages/webhooks.js';
import { ImportPage } from './pages/import.js';
import { AppsPage } from './pages/apps.js';
import { LinkFormPage } from './pages/link-form.js';
import { LinkPage } from './pages/link-page.js';
import { LinksPage } from './pages/links.js';
import { OverviewPage } from './pages/overview.js';
import { SignInPage } from './pages/sign-in.js';

const NAV = [
  { href: '/', label: 'Overview' },
  { href: '/links', label: 'Links' },
  { href: '/import', label: 'Import' },
  { href: '/domains', label: 'Domains' },
  { href: '/apps', label: 'Apps' },
  { href: '/api-keys', label: 'API keys' },
  { href: '/webhooks', label: 'Webhooks' },
  { href: '/account', label: 'Account' },
];

/** The page for a path, with the title the tab shows. */
function route(path: string): { title: string; page: preact.JSX.Element } {
  let params: Record<string, string> | undefined;
  if (path === '/') return { title: 'Overview', page: <OverviewPage /> };
  if (path === '/links') return { title: 'Links', page: <LinksPage /> };
  if (path === '/links/new') return { title: 'New link', page: <LinkFormPage /> };
  if ((params = matchPath('/links/:id/edit', path))) return { title: 'Edit link', page: <LinkFormPage id={params.id!} /> };
  if ((params = matchPath('/links/:id', path))) return { title: 'Link', page: <LinkPage id={params.id!} /> };
  if (path === '/import') return { title: 'Import links', page: <ImportPage /> };
  if (path === '/apps') return { title: 'Apps', page: <AppsPage /> };
  if (path === '/api-keys') return { title: 'API keys', page: <ApiKeysPage /> };
  if (path === '/domains') return { title: 'Domains', page: <DomainsPage /> };
  if (path === '/webhooks') return { title: 'Webhooks', page: <WebhooksPage /> };
  if (path === '/account') return { title: 'Account', page: <AccountPage /> };
  return {
    title: 'Not found',
    page: (
      <section>
        <h1>Page not found</h1>
        <p>
          <AppLink href="/">Go to the overview</AppLink>
        </p>
      </section>
    ),
  };
}

export function App() {
  const [session, setSession] = useState<Session | undefined>(currentSession());
  const { path } = useLocation();
  useEffect(() => onSessionChange(setSession), []);

  if (!session) {
    document.title = 'Sign in · Deep links';
    return (
      <main id="main" class="narrow">
        <p class="brand">Deep links</p>
        <SignInPage />
      </main>
    );
  }
  const { title, page } = route(path);
  document.title = `${title} · Deep links`;
  const section = path === '/' ? '/' : NAV.find((item) => item.href !== '/' && path.startsWith(item.href))?.href;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <nav aria-label="Main">
          <AppLink href="/" class="brand">
            Deep links
          </AppLink>
          <ul>
            {NAV.map((item) => (
              <li key={item.href}>
                <a
                  href={item.href}
                  aria-current={section === item.href ? 'page' : undefined}
                  onClick={(event) => {
                    event.preventDefault();
                    navigate(item.href);
                  }}
                >
                  {item.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="account">
          <span class="muted who">{session.user.email}</span>
          <button
            type="button"
            class="secondary small"
            onClick={() => {
              signOut();
              navigate('/', { replace: true });
            }}
          >
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {page}
      </main>
    </>
  );
}
