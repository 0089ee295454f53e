// The console's only link to the service: the public API, with a bearer token kept in memory for
// this tab (never in localStorage, sessionStorage or a cookie). The credentials stay in memory too,
// so the token is re-requested before it expires; signing out forgets both.

import type { TokenResponse } from './types.ts';

export interface Session {
  clientId: string;
  /** the client's name, as the header shows it */
  clientName: string;
  scopes: string[];
  role: string;
  /** test: every page shows test data only (test mode) */
  environment: 'live' | 'test';
}

interface Secret {
  clientId: string;
  clientSecret: string;
  token: string;
  expiresAt: number;
}

/** An RFC 9457 problem (or a network failure) as the pages show it. */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly errors: { field: string; message: string }[] = [],
    /** the problem's extension members (e.g. an activation's operating_point) */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(detail);
  }
}

let secret: Secret | undefined;
let session: Session | null = null;
let refreshTimer: ReturnType<typeof setTimeout> | undefined;
const listeners = new Set<(s: Session | null) => void>();

export const currentSession = (): Session | null => session;
export const hasScope = (scope: string): boolean => session?.scopes.includes(scope) ?? false;
export function onSession(listener: (s: Session | null) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function publish(next: Session | null): void {
  session = next;
  for (const l of listeners) l(next);
}

async function requestToken(clientId: string, clientSecret: string): Promise<void> {
  const res = await send('POST', '/api/v1/auth/token', { client_id: clientId, client_secret: clientSecret }, undefined);
  const body = (await res.json()) as TokenResponse;
  secret = { clientId, clientSecret, token: body.access_token, expiresAt: Date.now() + body.expires_in * 1000 };
  clearTimeout(refreshTimer);
  // Renew at 80% of the lifetime, well before the service would refuse it.
  refreshTimer = setTimeout(
    () => {
      requestToken(clientId, clientSecret).catch(() => signOut());
    },
    Math.max(1, body.expires_in * 0.8) * 1000,
  );
  publish({
    clientId,
    clientName: body.client_name,
    scopes: body.scopes,
    role: body.role,
    environment: body.environment,
  });
}

export function signIn(clientId: string, clientSecret: string): Promise<void> {
  return requestToken(clientId, clientSecret);
}

export function signOut(): void {
  clearTimeout(refreshTimer);
  secret = undefined;
  publish(null);
}

async function send(
  method: string,
  path: string,
  body: unknown,
  token: string | undefined,
  accept = 'application/json',
): Promise<Response> {
  const headers: Record<string, string> = { accept };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch {
    throw new ApiProblem(0, 'network', 'The service could not be reached. Check the connection and retry.');
  }
  if (res.ok) return res;
  let problem: {
    code?: string;
    detail?: string;
    title?: string;
    errors?: { field: string; message: string }[];
    [k: string]: unknown;
  } = {};
  try {
    problem = (await res.json()) as typeof problem;
  } catch {
    // not a problem document (e.g. a proxy's page): fall back to the status line
  }
  throw new ApiProblem(
    res.status,
    problem.code ?? 'error',
    problem.detail ?? problem.title ?? `${res.status} ${res.statusText}`,
    problem.errors ?? [],
    problem,
  );
}

/** Calls the API with the session's token; a 401 re-requests the token once (it may have just expired). */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await authed(method, path, body);
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

export async function apiText(path: string, accept: string): Promise<string> {
  return (await authed('GET', path, undefined, accept)).text();
}

async function authed(method: string, path: string, body: unknown, accept?: string): Promise<Response> {
  if (!secret) throw new ApiProblem(401, 'unauthenticated', 'Signed out: sign in again.');
  try {
    return await send(method, path, body, secret.token, accept);
  } catch (err) {
    if (!(err instanceof ApiProblem) || err.status !== 401 || !secret) throw err;
    await requestToken(secret.clientId, secret.clientSecret).catch(() => {
      signOut();
      throw err;
    });
    return send(method, path, body, secret!.token, accept);
  }
}

/** Builds a query string from the set members of `params`. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}
