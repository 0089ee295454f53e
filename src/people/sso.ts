// Single sign-on through an OpenID Connect provider (docs/api.md, "People", "Single sign-on"): the
// authorization code flow with PKCE, state and nonce (openid-client). /start keeps state, nonce and
// the PKCE verifier in a short-lived cookie sealed under a subkey of the deployment's key-encryption
// key; /callback opens it, exchanges the code, validates the ID token (signature, issuer, audience,
// expiry, nonce), reads the claims (the ID token's, completed by userinfo), and maps them to a person:
// a verified e-mail of an allowed domain, a role from the role claim. The person is found by e-mail
// or created active; their role follows the provider's claim at every sign-in (audited).
import * as client from 'openid-client';
import type { Store } from '../store/db.ts';
import type { OidcConfig } from '../config/env.ts';
import { open, seal, type KeyEncryption, type Purpose, type SealingKey } from '../lib/envelope.ts';
import { newId } from '../lib/ids.ts';
import type { Actor } from '../lib/principal.ts';
import { isPersonRole, personRoleAtLeast, type PersonRole } from '../lib/person-roles.ts';
import { recordAudit } from '../audit-log/repository.ts';
import { insertUser, newUserRow, revokeUserSessions, updateUser, userByEmail, type UserRow } from './repository.ts';
import { normaliseEmail } from './service.ts';

export const SSO_CALLBACK_PATH = '/api/v1/auth/sso/callback';
/** How long a sign-in may take at the provider (the flow cookie's life). */
export const FLOW_TTL_MS = 10 * 60_000;
const SCOPE = 'openid email profile';
/** seconds, for each request to the provider */
const PROVIDER_TIMEOUT = 10;

/** The short code a refused sign-in answers with (`/console/?sso_error=<code>`). */
export type SsoErrorCode =
  'state' | 'provider' | 'exchange' | 'unavailable' | 'email' | 'domain' | 'role' | 'deactivated' | 'rate_limited';

export class SsoError extends Error {
  constructor(
    readonly code: SsoErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'SsoError';
  }
}

/**
 * The role a claim value grants: one of the person roles, or of a list the highest one known;
 * absent or unknown, `fallback` (VOUCH_OIDC_DEFAULT_ROLE), else none (the sign-in is refused).
 */
export function roleFromClaim(value: unknown, fallback: PersonRole | undefined): PersonRole | undefined {
  let best: PersonRole | undefined;
  for (const v of Array.isArray(value) ? (value as unknown[]) : [value])
    if (isPersonRole(v) && (best === undefined || personRoleAtLeast(v, best))) best = v;
  return best ?? fallback;
}

/** Whether an e-mail's domain is one of `allowed` (lower case; exactly, not a subdomain); empty: any. */
export function emailDomainAllowed(email: string, allowed: readonly string[]): boolean {
  if (allowed.length === 0) return true;
  const at = email.lastIndexOf('@');
  if (at < 1) return false;
  const domain = email.slice(at + 1).toLowerCase();
  return allowed.includes(domain);
}

/** Who a sign-in's claims say the person is. */
interface SsoIdentity {
  email: string;
  name: string;
  role: PersonRole;
}

const CONTROL = /\p{Cc}/gu;

/** The person the provider's claims describe, or an SsoError saying why they may not sign in. */
export function identityFromClaims(
  claims: Record<string, unknown>,
  settings: Pick<OidcConfig, 'roleClaim' | 'defaultRole' | 'allowedDomains'>,
): SsoIdentity {
  const raw = claims.email;
  const email = typeof raw === 'string' ? normaliseEmail(raw) : '';
  if (!/^[^\s@]+@[^\s@]+$/.test(email) || email.length > 254)
    throw new SsoError('email', 'the provider gave no usable e-mail address');
  if (claims.email_verified !== true) throw new SsoError('email', 'the provider has not verified the e-mail address');
  if (!emailDomainAllowed(email, settings.allowedDomains))
    throw new SsoError('domain', `e-mail domain ${email.slice(email.lastIndexOf('@') + 1)} is not allowed`);
  const role = roleFromClaim(claims[settings.roleClaim], settings.defaultRole);
  if (role === undefined) throw new SsoError('role', `no known role in claim ${settings.roleClaim}`);
  const given = typeof claims.name === 'string' ? claims.name.replace(CONTROL, '').trim().slice(0, 120) : '';
  return { email, name: given || email.slice(0, email.indexOf('@')).slice(0, 120), role };
}

/** What /start keeps for /callback, in the sealed cookie. */
export interface Flow {
  state: string;
  nonce: string;
  verifier: string;
  expiresAt: number;
}

const FLOW_COOKIE: Purpose = { subkey: { salt: 'vouch/sso/v1', info: 'sign-in flow cookie' } };
const FLOW_AAD = 'vouch/sso-flow/v1';

/** The flow sealed (AES-256-GCM under a subkey of the KEK), as a cookie value. */
export function sealFlow(flow: Flow, kek: SealingKey): string {
  return Buffer.from(seal(JSON.stringify(flow), FLOW_AAD, kek, FLOW_COOKIE), 'utf8').toString('base64url');
}

/** The flow a cookie value holds, or undefined: missing, altered, sealed under an unknown key, or expired. */
export function openFlow(value: string | undefined, enc: KeyEncryption, now: number): Flow | undefined {
  if (value === undefined || value === '' || value.length > 4096) return undefined;
  const opened = open(
    Buffer.from(value, 'base64url').toString('utf8'),
    FLOW_AAD,
    [enc.current, ...enc.previous],
    FLOW_COOKIE,
  );
  if (!opened.ok) return undefined;
  try {
    const flow = JSON.parse(opened.plaintext) as Partial<Flow>;
    if (
      typeof flow.state !== 'string' ||
      typeof flow.nonce !== 'string' ||
      typeof flow.verifier !== 'string' ||
      typeof flow.expiresAt !== 'number' ||
      flow.expiresAt <= now
    )
      return undefined;
    return { state: flow.state, nonce: flow.nonce, verifier: flow.verifier, expiresAt: flow.expiresAt };
  } catch {
    return undefined;
  }
}

const reason = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** The provider, discovered at first use (and again after a failed discovery), and the two legs of the flow. */
export class OidcClient {
  #configuration: Promise<client.Configuration> | undefined;

  constructor(
    readonly settings: OidcConfig,
    /** the registered redirect URI: VOUCH_PUBLIC_URL + SSO_CALLBACK_PATH */
    readonly redirectUri: string,
  ) {}

  #discover(): Promise<client.Configuration> {
    const { issuer, clientId, clientSecret } = this.settings;
    this.#configuration ??= client
      .discovery(
        new URL(issuer),
        clientId,
        clientSecret === undefined ? {} : { client_secret: clientSecret },
        clientSecret === undefined ? client.None() : client.ClientSecretBasic(clientSecret),
        {
          // the ID token's signature is checked against the provider's keys, even over TLS
          execute: [
            client.enableNonRepudiationChecks,
            // http:// is accepted for a loopback issuer only (src/config/env.ts)
            ...(new URL(issuer).protocol === 'http:' ? [client.allowInsecureRequests] : []),
          ],
          timeout: PROVIDER_TIMEOUT,
        },
      )
      .catch((err: unknown) => {
        this.#configuration = undefined;
        throw new SsoError('unavailable', `discovery of ${issuer} failed: ${reason(err)}`);
      });
    return this.#configuration;
  }

  /** The provider's authorization URL and the flow to keep until the callback. */
  async begin(now: number): Promise<{ url: URL; flow: Flow }> {
    const configuration = await this.#discover();
    const flow: Flow = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      verifier: client.randomPKCECodeVerifier(),
      expiresAt: now + FLOW_TTL_MS,
    };
    const url = client.buildAuthorizationUrl(configuration, {
      redirect_uri: this.redirectUri,
      scope: SCOPE,
      state: flow.state,
      nonce: flow.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(flow.verifier),
      code_challenge_method: 'S256',
    });
    return { url, flow };
  }

  /**
   * Exchanges the code of `callbackUrl` (the redirect URI with the provider's parameters) and
   * returns the ID token's claims, completed by the userinfo endpoint's when the provider has one.
   */
  async complete(callbackUrl: URL, flow: Flow): Promise<Record<string, unknown>> {
    const configuration = await this.#discover();
    try {
      const tokens = await client.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      });
      const idClaims = tokens.claims();
      if (!idClaims) throw new Error('no ID token');
      const userinfo =
        configuration.serverMetadata().userinfo_endpoint !== undefined && tokens.access_token
          ? await client.fetchUserInfo(configuration, tokens.access_token, idClaims.sub)
          : {};
      // the signed ID token's claims win over userinfo's (the same subject: fetchUserInfo checks it)
      return { ...userinfo, ...idClaims };
    } catch (err) {
      throw new SsoError('exchange', `the code exchange or the ID token failed: ${reason(err)}`);
    }
  }
}

/**
 * The person an SSO sign-in stands for: found by e-mail (an invited one is activated), or created
 * active. A deactivated person stays refused; a role that differs from the claim's follows the
 * claim, ends the person's sessions and is audited, as an admin's change would be.
 */
export async function signInPerson(store: Store, identity: SsoIdentity, now = Date.now()): Promise<UserRow> {
  const existing = await userByEmail(store.db, identity.email);
  if (existing) return followProvider(store, existing, identity, now);
  const id = newId('usr');
  const actor: Actor = { type: 'user', id, name: identity.name };
  const row = newUserRow(
    {
      id,
      email: identity.email,
      name: identity.name,
      role: identity.role,
      status: 'active',
      created_by: JSON.stringify(actor),
    },
    now,
  );

  try {
    await insertUser(store.db, row);
  } catch (err) {
    // the unique e-mail: a parallel first sign-in (or an invitation) of the same address won the race
    const won = await userByEmail(store.db, identity.email);
    if (won) return followProvider(store, won, identity, now);
    throw err;
  }
  await recordAudit(store, {
    environment: 'live',
    actor,
    action: 'user.created',
    target: `user:${id}`,
    after: { email: identity.email, name: identity.name, role: identity.role, via: 'sso' },
    at: now,
  });
  return row;
}

async function followProvider(store: Store, row: UserRow, identity: SsoIdentity, now: number): Promise<UserRow> {
  if (row.status === 'deactivated') throw new SsoError('deactivated', `user ${row.id} is deactivated`);
  const actor: Actor = { type: 'user', id: row.id, name: row.name };
  const activate = row.status === 'invited';
  const roleChanged = row.role !== identity.role;
  if (!activate && !roleChanged) return row;
  const changes: Partial<UserRow> = {
    ...(activate ? { status: 'active', invitation_digest: null, invitation_expires_at: null } : {}),
    ...(roleChanged ? { role: identity.role } : {}),
  };
  await updateUser(store.db, row.id, { ...changes, updated_at: now });
  const target = `user:${row.id}`;
  if (activate)
    await recordAudit(store, {
      environment: 'live',
      actor,
      action: 'user.activated',
      target,
      after: { via: 'sso' },
      at: now,
    });
  if (roleChanged) {
    // sessions opened under the old role end, as with an admin's change (docs/api.md, "People")
    await revokeUserSessions(store.db, row.id, now);
    await recordAudit(store, {
      environment: 'live',
      actor,
      action: 'user.role_changed',
      target,
      before: { role: row.role },
      after: { role: identity.role, via: 'sso' },
      at: now,
    });
  }
  return { ...row, ...changes, updated_at: now };
}
