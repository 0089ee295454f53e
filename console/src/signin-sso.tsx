// Single sign-on on the sign-in page (docs/api.md, "People", "Single sign-on"): "Sign in with SSO"
// only when the service has it (GET /api/v1/auth/sso), and what a refused round
// (/console/?sso_error=<code>) means, in words of our own: the code only picks a sentence, so
// nothing from the address reaches the page.
import { useEffect, useState } from 'preact/hooks';

/** What each refusal code of /api/v1/auth/sso/callback means to the person (src/people/sso.ts, SsoErrorCode). */
const SSO_ERRORS: Record<string, string> = {
  state: 'the sign-in took too long or was started in another tab. Try again.',
  provider: 'the identity provider did not sign you in.',
  exchange: 'the identity provider’s answer could not be checked. Try again, or ask an admin.',
  unavailable: 'the identity provider could not be reached. Try again shortly.',
  email: 'the identity provider did not give a verified e-mail address.',
  domain: 'your e-mail address is not of a domain this console accepts.',
  role: 'your account at the identity provider has no role in this console. Ask an admin.',
  deactivated: 'your account here is deactivated. Ask an admin.',
  rate_limited: 'too many sign-in attempts. Wait a minute and try again.',
};

/**
 * The refusal of the SSO round that led here (?sso_error=), once: read, then taken out of the
 * address bar. Only a known code picks a sentence; anything else gets a fixed one, so nothing
 * from the address reaches the page.
 */
export function takeSsoError(): string | undefined {
  const params = new URLSearchParams(location.search);
  const code = params.get('sso_error');
  if (code === null) return undefined;
  params.delete('sso_error');
  const rest = params.toString();
  history.replaceState(null, '', `${location.pathname}${rest ? `?${rest}` : ''}${location.hash}`);
  return Object.hasOwn(SSO_ERRORS, code) ? SSO_ERRORS[code] : 'the sign-in could not be completed. Try again.';
}

/** "Sign in with SSO": a link (the round is browser redirects), shown only when the service has single sign-on. */
export function SsoSignIn() {
  const [enabled, setEnabled] = useState(false);
  useEffect(() => {
    // public, and asked without credentials: whether to offer the button at all
    fetch('/api/v1/auth/sso', { credentials: 'omit', cache: 'no-store', headers: { accept: 'application/json' } })
      .then((res) => (res.ok ? (res.json() as Promise<{ enabled?: unknown }>) : { enabled: false }))
      .then((body) => setEnabled(body.enabled === true))
      .catch(() => setEnabled(false));
  }, []);
  if (!enabled) return null;
  return (
    <div class="sso">
      <a class="button primary" href="/api/v1/auth/sso/start">
        Sign in with SSO
      </a>
      <p class="or muted small">or with your e-mail and password</p>
    </div>
  );
}
