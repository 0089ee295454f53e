// The console's shell: sign-in, navigation that follows the token's scopes, and the page router.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import './styles.css';
import { currentSession, hasScope, onSession, signIn, signOut, type Session } from './api.ts';
import { ErrorBox, Field, Link, navigate, useAction, useRoute } from './ui.tsx';
import { DecisionsPage } from './pages/decisions.tsx';
import { DecisionPage } from './pages/decision-view.tsx';
import { DisputesPage } from './pages/disputes.tsx';
import { DisputePage } from './pages/dispute.tsx';
import { EntitiesPage } from './pages/entities.tsx';
import { PoliciesPage } from './pages/policies.tsx';
import { KeysPage } from './pages/keys.tsx';
import { WebhooksPage } from './pages/webhooks.tsx';
import { NetworkPage } from './pages/network.tsx';
import { RulesSection } from './pages/rules.tsx';
import { ReviewsSection } from './pages/reviews.tsx';
import { ReviewsNavName } from './pages/reviews-nav.tsx';
import { DashboardPage } from './pages/dashboard.tsx';

/** Navigation, in order, with the scope each page needs to be shown. */
const PAGES: readonly { path: string; name: string; scope: string }[] = [
  // the landing page: the root, and where sign-in leads
  { path: '/', name: 'Dashboard', scope: 'audit:read' },
  { path: '/decisions', name: 'Decisions', scope: 'audit:read' },
  { path: '/disputes', name: 'Disputes', scope: 'audit:read' },
  { path: '/entities', name: 'Entities', scope: 'trust:read' },
  { path: '/policies', name: 'Policies', scope: 'policy:read' },
  { path: '/rules', name: 'Rules', scope: 'rules:read' },
  { path: '/reviews', name: 'Reviews', scope: 'reviews:read' },
  { path: '/keys', name: 'Keys', scope: 'keys:read' },
  { path: '/webhooks', name: 'Webhooks', scope: 'webhooks:read' },
  { path: '/network', name: 'Network', scope: 'network:admin' },
];

function SignIn() {
  const [clientId, setClientId] = useState('');
  const [clientSecret, setClientSecret] = useState('');
  const { busy, error, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void run(() => signIn(clientId.trim(), clientSecret));
  };
  return (
    <main class="signin">
      <h1>Vouch console</h1>
      <p class="muted">
        Sign in with an API client's credentials. They and the session stay in this page's memory only: reloading or
        closing the page signs you out.
      </p>
      <form onSubmit={submit}>
        <Field label="Client ID">
          <input
            name="client_id"
            autoComplete="username"
            required
            value={clientId}
            onInput={(e) => setClientId(e.currentTarget.value)}
          />
        </Field>
        <Field label="Client secret">
          <input
            name="client_secret"
            type="password"
            autoComplete="current-password"
            required
            value={clientSecret}
            onInput={(e) => setClientSecret(e.currentTarget.value)}
          />
        </Field>
        <ErrorBox error={error} what="Sign-in failed" />
        <button class="primary" type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}

function Shell({ session }: { session: Session }) {
  const path = useRoute();
  const visible = PAGES.filter((p) => hasScope(p.scope));
  const section = '/' + (path.split('/')[1] ?? '');
  const page = PAGES.find((p) => p.path === section);
  useEffect(() => {
    // The root, or a page this principal cannot see: go to the first page it can.
    if ((!page || !hasScope(page.scope)) && visible[0]) navigate(visible[0].path);
  }, [path]);
  useEffect(() => {
    document.title = page ? `${page.name} · Vouch console` : 'Vouch console';
  }, [page]);
  const id = decodeURIComponent(path.split('/').slice(2).join('/'));
  let content;
  if (!page || !hasScope(page.scope))
    content = visible.length ? null : <p>This client has none of the scopes the console's pages need.</p>;
  else if (page.path === '/') content = <DashboardPage />;
  else if (page.path === '/decisions') content = id ? <DecisionPage id={id} /> : <DecisionsPage />;
  else if (page.path === '/disputes') content = id ? <DisputePage id={id} /> : <DisputesPage />;
  else if (page.path === '/entities') content = <EntitiesPage id={id} />;
  else if (page.path === '/policies') content = <PoliciesPage version={id || undefined} />;
  else if (page.path === '/keys') content = <KeysPage />;
  else if (page.path === '/network') content = <NetworkPage />;
  else if (page.path === '/rules') content = <RulesSection rest={id} />;
  else if (page.path === '/reviews') content = <ReviewsSection rest={id} />;
  else content = <WebhooksPage />;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Vouch</span>
        <nav aria-label="Main">
          <ul>
            {visible.map((p) => (
              <li key={p.path}>
                <Link to={p.path} aria-current={p.path === section ? 'page' : undefined}>
                  {p.path === '/reviews' ? <ReviewsNavName path={path} /> : p.name}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          {session.environment === 'test' && (
            <span class="test-mode" title="This client's tokens read and write test data only">
              Test data
            </span>
          )}
          <span class="muted" title={`${session.clientId}: ${session.scopes.join(' ')}`}>
            <span class="client-name">{session.clientName}</span> · {session.role}
          </span>
          <button type="button" onClick={() => signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {content}
      </main>
    </>
  );
}

function App() {
  const [session, setSession] = useState(currentSession());
  useEffect(() => onSession(setSession), []);
  return session ? <Shell session={session} /> : <SignIn />;
}

render(<App />, document.getElementById('app')!);
