// The console's only link to the service: the public API, with one of two credentials.
// - A person (docs/api.md, "People") signs in with e-mail and password: the service keeps the
//   session in an HttpOnly cookie, and the page keeps the session's CSRF token in memory and in
//   sessionStorage (this tab only), sending it as X-CSRF-Token on every request that changes
//   something. A reloaded page asks GET /api/v1/auth/session whether the session lives, and gets a
//   fresh CSRF token with the answer.
// - A machine (an API client) signs in with its id and secret: a bearer token kept in memory for
//   this tab (never in storage or a cookie), re-requested before it expires; a reload forgets it.

import type { TokenResponse } from './types.ts';
import type { LoginResponse, PersonRole, SessionInfo, User } from './people-types.ts';
import { isPersonRole, machineRoleOf } from '../../src/lib/person-roles.ts';
import { ApiProblem } from './api-problems.ts';
import { send, type Credential } from './api-send.ts';

export { ApiProblem, HeldForApproval } from './api-problems.ts';

export interface Session {
  kind: 'person' | 'client';
  /** who acts: the person's user id, or the client's id (what reviews and the audit log name) */
  actorId: string;
  /** the person's or the client's name, as the header shows it */
  name: string;
  scopes: string[];
  /** the machine role (service, operator, admin): a person's is derived from their role, as the service does */
  role: string;
  /** a person's role (viewer, analyst, operator, admin) */
  personRole?: PersonRole;
  /** test: every page shows test data only (test mode); people always work on live data */
  environment: 'live' | 'test';
}

const CSRF_KEY = 'vouch.console.csrf';
const ENDED = 'Your session has ended (30 idle minutes, 12 hours, or a change to your account): sign in again.';

let credential: Credential | undefined;
let session: Session | null = null;
let ended: string | undefined;
let refreshTimer: ReturnType<typeof setTimeout> | undefined;
let csrfRefresh: Promise<void> | undefined;
const listeners = new Set<(s: Session | null) => void>();

export const currentSession = (): Session | null => session;
export const hasScope = (scope: string): boolean => session?.scopes.includes(scope) ?? false;
/** Why the last session ended without the person signing out (expired, ended elsewhere), once. */
export function takeEndedReason(): string | undefined {
  const reason = ended;
  ended = undefined;
  return reason;
}
export function onSession(listener: (s: Session | null) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function publish(next: Session | null): void {
  session = next;
  for (const l of listeners) l(next);
}

// ---- signing in and out
function rememberCsrf(csrf: string): void {
  credential = { kind: 'person', csrf };
  try {
    sessionStorage.setItem(CSRF_KEY, csrf);
  } catch {
    // storage refused (a private window's quota): the token stays in memory, a reload asks for a new one
  }
}

function forgetCsrf(): void {
  try {
    sessionStorage.removeItem(CSRF_KEY);
  } catch {
    // nothing stored
  }
}

/** Whether this tab had a person's session before it was reloaded (worth waiting for, rather than a sign-in form). */
export function hadPersonSession(): boolean {
  try {
    return sessionStorage.getItem(CSRF_KEY) !== null;
  } catch {
    return false;
  }
}

/** A person's session as GET /api/v1/auth/session describes it; undefined for a machine's answer. */
function personSession(info: SessionInfo): Session | undefined {
  if (info.actor.type !== 'user' || !isPersonRole(info.role)) return undefined;
  return {
    kind: 'person',
    actorId: info.actor.id,
    name: info.actor.name,
    scopes: info.scopes,
    role: machineRoleOf(info.role),
    personRole: info.role,
    environment: 'live',
  };
}

/** Who the session cookie stands for, with a fresh CSRF token (it replaces the one before). */
async function fetchSession(): Promise<{ next: Session; csrf: string } | undefined> {
  const res = await send('GET', '/api/v1/auth/session', undefined, { kind: 'person', csrf: '' });
  const info = (await res.json()) as SessionInfo;
  const next = personSession(info);
  return next && { next, csrf: info.csrf_token ?? '' };
}

async function loadPersonSession(): Promise<void> {
  const found = await fetchSession();
  if (!found) throw new ApiProblem(401, 'unauthenticated', 'This is not a console session.');
  rememberCsrf(found.csrf);
  publish(found.next);
}

/**
 * On load: a person's session that outlived the reload (its cookie) is resumed with a fresh CSRF
 * token; none (401) leaves the sign-in form. Someone who signed in meanwhile is kept.
 */
export async function resumeSession(): Promise<void> {
  const found = await fetchSession().catch(() => undefined);
  if (session) return;
  if (!found) return forgetCsrf();
  rememberCsrf(found.csrf);
  publish(found.next);
}

/**
 * A person signs in: the session cookie, the CSRF token, then who they are (role and scopes). One
 * with a second factor also sends its code (a 401 naming `totp` asks for it).
 */
export async function signInPerson(
  email: string,
  password: string,
  second: { totp?: string; recovery_code?: string } = {},
): Promise<void> {
  stopClient();
  const res = await send('POST', '/api/v1/auth/login', JSON.stringify({ email, password, ...second }), undefined);
  const body = (await res.json()) as LoginResponse;
  rememberCsrf(body.csrf_token);
  await loadPersonSession();
}

/** Accepts an invitation (sets the password), then signs in with it. */
export async function acceptInvitation(token: string, password: string): Promise<void> {
  const res = await send('POST', '/api/v1/auth/invitations/accept', JSON.stringify({ token, password }), undefined);
  const user = (await res.json()) as User;
  await signInPerson(user.email, password);
}

async function requestToken(clientId: string, clientSecret: string): Promise<void> {
  const secret = JSON.stringify({ client_id: clientId, client_secret: clientSecret });
  const res = await send('POST', '/api/v1/auth/token', secret, undefined);
  const body = (await res.json()) as TokenResponse;
  credential = { kind: 'client', clientId, clientSecret, token: body.access_token };
  clearTimeout(refreshTimer);
  // Renew at 80% of the lifetime, well before the service would refuse it.
  refreshTimer = setTimeout(
    () => {
      requestToken(clientId, clientSecret).catch(() => end('The client could no longer sign in: sign in again.'));
    },
    Math.max(1, body.expires_in * 0.8) * 1000,
  );
  publish({
    kind: 'client',
    actorId: clientId,
    name: body.client_name,
    scopes: body.scopes,
    role: body.role,
    environment: body.environment,
  });
}

/** A machine signs in with an API client's id and secret (kept in this tab's memory only). */
export function signInClient(clientId: string, clientSecret: string): Promise<void> {
  return requestToken(clientId, clientSecret);
}

function stopClient(): void {
  clearTimeout(refreshTimer);
  refreshTimer = undefined;
}

/** The session ended without the person asking: the sign-in form says why. */
function end(reason: string): void {
  stopClient();
  credential = undefined;
  forgetCsrf();
  ended = reason;
  publish(null);
}

/** Signs out: a person's session ends at the service too (logout), a client's token is forgotten. */
export async function signOut(): Promise<void> {
  const was = credential;
  stopClient();
  credential = undefined;
  forgetCsrf();
  if (was?.kind === 'person') {
    // the cookie is cleared by the answer; a failure (the session had already ended) changes nothing here
    await send('POST', '/api/v1/auth/logout', undefined, was).catch(() => undefined);
  }
  publish(null);
}

// ---- requests (the typed calls: api-client.ts)
/** An answer that is not JSON (the policy report's HTML), as the signed-in principal. */
export async function apiText(path: string, accept: string): Promise<string> {
  return (await authed('GET', path, undefined, accept)).text();
}

/** A 403 that names the CSRF token: another tab of this session took a fresh one (a reload). */
const staleCsrf = (err: unknown): boolean =>
  err instanceof ApiProblem && err.status === 403 && err.code === 'forbidden' && /csrf/i.test(err.detail);

/**
 * One request as the signed-in principal (`json`: the body, already encoded). A 401 re-requests a
 * client's token once, or ends a person's session (it expired); a stale CSRF token is renewed once.
 */
export async function authed(
  method: string,
  path: string,
  json: string | undefined,
  accept?: string,
): Promise<Response> {
  const auth = credential;
  if (!auth) throw new ApiProblem(401, 'unauthenticated', 'Signed out: sign in again.');
  try {
    return await send(method, path, json, auth, accept);
  } catch (err) {
    if (!(err instanceof ApiProblem)) throw err;
    if (auth.kind === 'person') {
      if (err.status === 401) {
        if (credential === auth) end(ENDED);
        throw err;
      }
      if (!staleCsrf(err)) throw err;
      // Unless another request has fetched a fresh token since this one was sent, fetch one (once for all of them).
      if (credential === auth) {
        csrfRefresh ??= loadPersonSession().finally(() => (csrfRefresh = undefined));
        await csrfRefresh.catch(() => {
          end(ENDED);
          throw err;
        });
      }
      if (credential?.kind !== 'person') throw err;
      return send(method, path, json, credential, accept);
    }
    if (err.status !== 401) throw err;
    // The token may have just expired: re-request it, unless it was renewed since this request was sent.
    if (credential === auth)
      await requestToken(auth.clientId, auth.clientSecret).catch(() => {
        end('The client could no longer sign in: sign in again.');
        throw err;
      });
    if (credential?.kind !== 'client') throw err;
    return send(method, path, json, credential, accept);
  }
}
