// Signing in: a person with e-mail and password (docs/api.md, "People"); an API client with its id
// and secret only under a collapsed, secondary option (machines, and tools that act as one). And the
// invitation page, /console/?invitation=TOKEN: a new person sets a password, and is signed in.
// "Sign in with SSO" shows only when the service has single sign-on (GET /api/v1/auth/sso); a
// refused SSO round comes back as /console/?sso_error=<code>, said in words of our own (signin-sso.tsx).
import { useState } from 'preact/hooks';
import { acceptInvitation, signInClient, signInPerson, takeEndedReason, type ApiProblem } from './api.ts';
import { SsoSignIn, takeSsoError } from './signin-sso.tsx';
import { ErrorBox, Field, useAction } from './ui.tsx';

const PASSWORD_MIN = 12;
const PASSWORD_MAX = 256;

/** "15 minutes", "1 minute": a Retry-After in seconds, rounded up to whole minutes. */
function inMinutes(seconds: number | undefined): string {
  const minutes = Math.max(1, Math.ceil((seconds ?? 60) / 60));
  return `${minutes} ${minutes === 1 ? 'minute' : 'minutes'}`;
}

/** A 401 that asks for the second factor's code (the password was right). */
const asksForCode = (error: ApiProblem | undefined): boolean =>
  error?.status === 401 && error.errors.some((e) => e.field === 'totp');

/** A failed sign-in, said plainly: wrong credentials (401), locked (429, with how long), or the service's word. */
function SignInProblem({ error, code }: { error: ApiProblem | undefined; code?: boolean }) {
  if (!error) return null;
  if (asksForCode(error))
    return code ? (
      <div class="error" role="alert">
        <strong>That code was not accepted.</strong> Type the current six-digit code, or a recovery code.
      </div>
    ) : (
      <p class="note" role="status">
        This account has a second factor: type the six-digit code from your authenticator app.
      </p>
    );
  if (error.status === 401)
    return (
      <div class="error" role="alert">
        <strong>Wrong e-mail or password.</strong> Check both and try again; after five wrong passwords in a row the
        account is locked for 15 minutes.
      </div>
    );
  if (error.status === 429)
    return (
      <div class="error" role="alert">
        <strong>Locked:</strong> too many failed sign-ins. Try again in {inMinutes(error.retryAfter)}.
      </div>
    );
  return <ErrorBox error={error} what="Sign-in failed" />;
}

export function SignIn() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [ended] = useState(takeEndedReason);
  const [ssoError] = useState(takeSsoError);
  // the second factor: asked for once the password was right
  const [needsCode, setNeedsCode] = useState(false);
  const [recovery, setRecovery] = useState(false);
  const [code, setCode] = useState('');
  const [triedCode, setTriedCode] = useState(false);
  const { busy, error, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    const second = !needsCode ? {} : recovery ? { recovery_code: code.trim() } : { totp: code.trim() };
    setTriedCode(needsCode);
    void run(async () => {
      try {
        await signInPerson(email.trim(), password, second);
      } catch (err) {
        if (asksForCode(err as ApiProblem)) setNeedsCode(true);
        throw err;
      }
    });
  };
  return (
    <main class="signin">
      <h1>Vouch console</h1>
      {ended && (
        <p class="note" role="status">
          {ended}
        </p>
      )}
      {ssoError && (
        <div class="error" role="alert">
          <strong>Single sign-on failed:</strong> {ssoError}
        </div>
      )}
      <form onSubmit={submit} aria-labelledby="h-signin">
        <h2 id="h-signin">Sign in</h2>
        <SsoSignIn />
        <Field label="E-mail">
          <input
            name="email"
            type="email"
            autoComplete="username"
            required
            maxLength={254}
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </Field>
        <Field label="Password">
          <input
            name="password"
            type="password"
            autoComplete="current-password"
            required
            maxLength={PASSWORD_MAX}
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </Field>
        {needsCode && (
          <Field
            label={recovery ? 'Recovery code' : 'Authentication code'}
            hint={
              recovery ? 'One of the ten codes shown when the second factor was turned on; each works once.' : undefined
            }
          >
            <input
              // a fresh input per kind of code: the six digits' pattern must not linger on a recovery code
              key={recovery ? 'recovery' : 'totp'}
              name="code"
              autoComplete="one-time-code"
              inputMode={recovery ? 'text' : 'numeric'}
              pattern={recovery ? undefined : '[0-9]{6}'}
              maxLength={recovery ? 40 : 6}
              required
              value={code}
              onInput={(e) => setCode(e.currentTarget.value)}
            />
          </Field>
        )}
        {needsCode && (
          <button type="button" class="linkish" onClick={() => (setRecovery(!recovery), setCode(''))}>
            {recovery ? 'Use the authenticator code instead' : 'Use a recovery code instead'}
          </button>
        )}
        <SignInProblem error={error} code={triedCode} />
        <button class="primary" type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <p class="muted small">
          No account yet? An admin invites you and sends you a link to set your password. Forgot it? Ask an admin for a
          new invitation.
        </p>
      </form>
      <ClientSignIn />
    </main>
  );
}

/** The machines' way in, folded away: a person never needs a client secret. */
function ClientSignIn() {
  const [clientId, setClientId] = useState('');
  const [clientSecret, setClientSecret] = useState('');
  const { busy, error, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void run(() => signInClient(clientId.trim(), clientSecret));
  };
  return (
    <details class="client-signin">
      <summary>Sign in as an API client (machines)</summary>
      <p class="muted small">
        For integrations and automation, not for people: an API client's id and secret. They stay in this page's memory
        only, and reloading or closing the page signs the client out.
      </p>
      <form onSubmit={submit} aria-label="Sign in as an API client">
        <Field label="Client ID">
          <input
            name="client_id"
            autoComplete="off"
            required
            value={clientId}
            onInput={(e) => setClientId(e.currentTarget.value)}
          />
        </Field>
        <Field label="Client secret">
          <input
            name="client_secret"
            type="password"
            autoComplete="off"
            required
            value={clientSecret}
            onInput={(e) => setClientSecret(e.currentTarget.value)}
          />
        </Field>
        <ErrorBox error={error} what="Sign-in failed" />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in as this client'}
        </button>
      </form>
    </details>
  );
}

/** /console/?invitation=TOKEN: set a password (twice, 12 characters or more), then signed in with it. */
export function Invitation({ token, onDone }: { token: string; onDone: () => void }) {
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [mismatch, setMismatch] = useState(false);
  const { busy, error, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    if (password !== again) return setMismatch(true);
    setMismatch(false);
    void run(async () => {
      await acceptInvitation(token, password);
      onDone();
    });
  };
  const invalid = error?.status === 400 && error.errors.some((f) => f.field === 'token');
  return (
    <main class="signin">
      <h1>Vouch console</h1>
      <form onSubmit={submit} aria-labelledby="h-invitation">
        <h2 id="h-invitation">Set your password</h2>
        <p class="muted">
          You were invited to the Vouch console. Choose a password of at least {PASSWORD_MIN} characters: a few words
          you will remember are better than a short, hard one. Then you are signed in.
        </p>
        <Field label="New password" hint={`${PASSWORD_MIN} characters or more.`}>
          <input
            name="new_password"
            type="password"
            autoComplete="new-password"
            required
            minLength={PASSWORD_MIN}
            maxLength={PASSWORD_MAX}
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </Field>
        <Field label="Repeat the password">
          <input
            name="repeat_password"
            type="password"
            autoComplete="new-password"
            required
            minLength={PASSWORD_MIN}
            maxLength={PASSWORD_MAX}
            value={again}
            onInput={(e) => setAgain(e.currentTarget.value)}
          />
        </Field>
        {mismatch && (
          <div class="error" role="alert">
            <strong>The two passwords differ.</strong> Type the same password twice.
          </div>
        )}
        {invalid ? (
          <div class="error" role="alert">
            <strong>This invitation link cannot be used:</strong> it is unknown, already used or expired (links last 72
            hours). Ask an admin for a new one.
          </div>
        ) : (
          <SignInProblem error={error} />
        )}
        <button class="primary" type="submit" disabled={busy}>
          {busy ? 'Setting your password…' : 'Set password and sign in'}
        </button>
        <p class="muted small">
          Already set it?{' '}
          <a href="/console/" onClick={(e) => (e.preventDefault(), onDone())}>
            Sign in
          </a>
          .
        </p>
      </form>
    </main>
  );
}
