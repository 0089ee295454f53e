// A real OpenID Connect provider for the single sign-on tests (oidc-provider, the reference
// implementation) on a loopback port: one confidential client registered for Vouch's callback,
// accounts whose claims the test sets, and interactions completed at once for the account the
// test names next (no login page). `browse` follows the provider's redirects like a browser,
// with a cookie jar of its own, until the redirect back to Vouch.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { exportJWK, generateKeyPair } from 'jose';

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** the claims of each account, by subject (email, email_verified, name, the role claim…) */
  accounts: Map<string, Record<string, unknown>>;
  /** the subject the next interaction signs in */
  signInAs(sub: string): void;
  /** follows redirects from `url` (a fresh browser) until one leaves the provider; returns that URL */
  browse(url: string): Promise<URL>;
  close(): Promise<void>;
}

export async function startProvider(redirectUri: string, roleClaim = 'vouch_role'): Promise<TestProvider> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'sso-test', alg: 'RS256', use: 'sig' };
  const clientId = 'vouch-desk';
  const clientSecret = 'sso-test-client-secret-0123456789';
  const accounts = new Map<string, Record<string, unknown>>();
  let next: string | undefined;

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [jwk as never] },
    cookies: { keys: ['sso-test-cookie-signing-key'] },
    // The role claim comes with the profile scope; the claims reach Vouch through userinfo (the
    // provider's default keeps scope claims out of the ID token when an access token is issued).
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', roleClaim] },
    features: { devInteractions: { enabled: false } },
    ttl: { Interaction: 600, Grant: 600, Session: 600, AccessToken: 600, IdToken: 600 },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx, sub) => {
      const claims = accounts.get(sub);
      return claims ? { accountId: sub, claims: () => ({ ...claims, sub }) } : undefined;
    },
  });
  const handle = provider.callback();
  server.on('request', (req, res) => {
    if (!req.url?.startsWith('/interaction/')) {
      void handle(req, res);
      return;
    }
    void (async () => {
      const details = await provider.interactionDetails(req, res);
      if (next === undefined) throw new Error('no account to sign in: call signInAs first');
      const grant = new provider.Grant({ accountId: next, clientId: String(details.params.client_id) });
      grant.addOIDCScope(String(details.params.scope));
      const grantId = await grant.save();
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId: next }, consent: { grantId } },
        { mergeWithLastSubmission: false },
      );
    })().catch((err: unknown) => {
      res.statusCode = 500;
      res.end(String(err));
    });
  });

  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    signInAs(sub) {
      next = sub;
    },
    async browse(start) {
      const jar = new Map<string, string>();
      let url = new URL(start);
      for (let hops = 0; hops < 10 && url.origin === issuer; hops++) {
        const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
        const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
        for (const line of res.headers.getSetCookie()) {
          const [pair = ''] = line.split(';');
          const eq = pair.indexOf('=');
          const [name, value] = [pair.slice(0, eq).trim(), pair.slice(eq + 1)];
          if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) jar.delete(name);
          else jar.set(name, value);
        }
        const location = res.headers.get('location');
        if (res.status < 300 || res.status >= 400 || !location)
          throw new Error(`the provider answered ${res.status} at ${url.pathname}: ${await res.text()}`);
        url = new URL(location, url);
      }
      return url;
    },
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}
