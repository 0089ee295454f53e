// The console's shell: sign-in (or an invitation), navigation that follows what the principal may
// do (a person's role, a client's scopes and role), and the page router.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import './styles.css';
import { currentSession, hadPersonSession, onSession, resumeSession, signOut, type Session } from './api.ts';
import { may } from './permissions.ts';
import { Link, Loading, navigate, useRoute } from './ui.tsx';
import { Invitation, SignIn } from './signin.tsx';
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
import { UsersPage } from './pages/users.tsx';
import { AuditLogPage } from './pages/audit-log.tsx';
import { ChangesPage } from './pages/changes.tsx';
import { AccountPage } from './pages/account.tsx';

/** Navigation, in order, with the scope (and the machine role) each page's first request needs. */
const PAGES: readonly { path: string; name: string; scope: string; role?: 'operator' | 'admin' }[] = [
  // the landing page: the root, and where sign-in leads
  { path: '/', name: 'Dashboard', scope: 'audit:read' },
  { path: '/decisions', name: 'Decisions', scope: 'audit:read' },
  { path: '/disputes', name: 'Disputes', scope: 'audit:read' },
  { path: '/entities', name: 'Entities', scope: 'trust:read' },
  { path: '/policies', name: 'Policies', scope: 'policy:read' },
  { path: '/rules', name: 'Rules', scope: 'rules:read' },
  { path: '/reviews', name: 'Reviews', scope: 'reviews:read' },
  { path: '/changes', name: 'Pending changes', scope: 'rules:read' },
  // every person reads the audit log; of machines, admins
  { path: '/audit-log', name: 'Audit log', scope: 'audit:read', role: 'admin' },
  { path: '/users', name: 'Users', scope: 'users:read', role: 'admin' },
  { path: '/keys', name: 'Keys', scope: 'keys:read' },
  { path: '/webhooks', name: 'Webhooks', scope: 'webhooks:read' },
  { path: '/network', name: 'Network', scope: 'network:admin' },
];

function Shell({ session }: { session: Session }) {
  const path = useRoute();
  const shown = (p: (typeof PAGES)[number]) => may(p.scope, p.role);
  const visible = PAGES.filter(shown);
  const section = '/' + (path.split('/')[1] ?? '');
  const page = PAGES.find((p) => p.path === section);
  // a person's own account (the second factor): reached from the name in the header, not the navigation
  const account = section === '/account' && session.kind === 'person';
  useEffect(() => {
    // The root, or a page this principal cannot see: go to the first page it can.
    if (!account && (!page || !shown(page)) && visible[0]) navigate(visible[0].path);
  }, [path]);
  useEffect(() => {
    document.title = account ? 'Your account · Vouch console' : page ? `${page.name} · Vouch console` : 'Vouch console';
  }, [page, account]);
  const id = decodeURIComponent(path.split('/').slice(2).join('/'));
  let content;
  if (account) content = <AccountPage />;
  else if (!page || !shown(page))
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
  else if (page.path === '/changes') content = <ChangesPage id={id || undefined} />;
  else if (page.path === '/audit-log') content = <AuditLogPage />;
  else if (page.path === '/users') content = <UsersPage />;
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
          <span class="muted" title={`${session.actorId}: ${session.scopes.join(' ')}`}>
            {session.kind === 'person' ? (
              <Link to="/account" class="client-name" title="Your account and second factor">
                {session.name}
              </Link>
            ) : (
              <span class="client-name">{session.name}</span>
            )}{' '}
            · <span class="role">{session.personRole ?? session.role}</span>
            {session.kind === 'client' && <span class="sr-only"> (API client)</span>}
          </span>
          <button type="button" onClick={() => void signOut()}>
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

/** The invitation token of /console/?invitation=TOKEN, if any. */
const invitationToken = (): string | null => new URLSearchParams(location.search).get('invitation');

function App() {
  const [session, setSession] = useState(currentSession());
  const [invitation, setInvitation] = useState(invitationToken);
  // A tab that had a person's session waits for the answer (rather than flash the sign-in form).
  const [checking, setChecking] = useState(hadPersonSession);
  useEffect(() => {
    // back from single sign-on (/console/?sso=1): the session is the cookie's; the marker leaves the address bar
    const params = new URLSearchParams(location.search);
    if (params.has('sso')) {
      params.delete('sso');
      const rest = params.toString();
      history.replaceState(null, '', `${location.pathname}${rest ? `?${rest}` : ''}`);
    }
    const off = onSession(setSession);
    void resumeSession().finally(() => setChecking(false));
    return off;
  }, []);
  if (invitation)
    return (
      <Invitation
        token={invitation}
        onDone={() => {
          // the token is spent (or not wanted): out of the address bar and the history
          history.replaceState(null, '', '/console/');
          setInvitation(null);
        }}
      />
    );
  if (session) return <Shell session={session} />;
  if (checking)
    return (
      <main class="signin">
        <Loading what="Checking your session" />
      </main>
    );
  return <SignIn />;
}

render(<App />, document.getElementById('app')!);
