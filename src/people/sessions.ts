// Console sessions (docs/api.md, "People"): a random token in an HttpOnly, SameSite=Strict cookie
// and a CSRF token the page sends back as X-CSRF-Token on every request that changes something
// (OWASP ASVS 3.4, 4.2.2). Both are stored as digests. A session ends after 30 idle minutes or 12
// hours whatever, when its person signs out, and with every session of theirs when they are
// deactivated or their role or password changes.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { parseCookie, stringifySetCookie } from 'cookie';
import type { Database } from '../store/schema.ts';
import { sha256Hex } from '../lib/digest.ts';
import { newId } from '../lib/ids.ts';
import type { Principal } from '../lib/principal.ts';
import { isPersonRole, machineRoleOf, personScopes, type PersonRole } from '../lib/person-roles.ts';
import { Forbidden } from '../lib/domain-errors.ts';
import { insertSession, revokeSession, sessionByToken, touchSession, userById } from './repository.ts';

const SESSION_COOKIE = 'vouch_session';
const SESSION_IDLE_MS = 30 * 60_000;
const SESSION_ABSOLUTE_MS = 12 * 3_600_000;
/** last_seen_at is written at most this often: a page's burst of requests is one write. */
const TOUCH_EVERY_MS = 60_000;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A person's principal: their role's scopes, the environment's data (docs/api.md, "People"). */
export function personPrincipal(user: { id: string; name: string; role: PersonRole }): Principal {
  return {
    id: user.id,
    kind: 'user',
    name: user.name,
    personRole: user.role,
    clientId: user.id,
    role: machineRoleOf(user.role),
    scopes: new Set(personScopes(user.role)),
    environment: 'live',
  };
}

export async function openSession(
  db: Kysely<Database>,
  userId: string,
  now: number,
): Promise<{ id: string; token: string; csrf: string; expiresAt: number }> {
  const token = randomBytes(32).toString('base64url');
  const csrf = randomBytes(32).toString('base64url');
  const id = newId('ses');
  const expiresAt = now + SESSION_ABSOLUTE_MS;
  await insertSession(db, {
    id,
    user_id: userId,
    token_digest: sha256Hex(token),
    csrf_digest: sha256Hex(csrf),
    created_at: now,
    last_seen_at: now,
    expires_at: expiresAt,
  });
  return { id, token, csrf, expiresAt };
}

/** Secure on HTTPS (a cookie marked Secure is not sent over plain http, the loopback console's case). */
export function sessionCookie(token: string, expiresAt: number, secure: boolean): string {
  return stringifySetCookie({
    name: SESSION_COOKIE,
    value: token,
    httpOnly: true,
    sameSite: 'strict',
    secure,
    path: '/',
    expires: new Date(expiresAt),
  });
}

export function clearedSessionCookie(secure: boolean): string {
  return stringifySetCookie({
    name: SESSION_COOKIE,
    value: '',
    httpOnly: true,
    sameSite: 'strict',
    secure,
    path: '/',
    expires: new Date(0),
  });
}

/** The session token a request carries in its cookie, if any. */
export function sessionToken(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  if (typeof header !== 'string' || !header.includes(SESSION_COOKIE)) return undefined;
  const value = parseCookie(header)[SESSION_COOKIE];
  return value === undefined || value === '' ? undefined : value;
}

const sameDigest = (value: string, digest: string): boolean => {
  const a = Buffer.from(sha256Hex(value), 'hex');
  const b = Buffer.from(digest, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
};

/**
 * The person a session cookie stands for, or undefined (unknown, expired, revoked, deactivated).
 * Throws 403 `forbidden` on a changing request without the session's CSRF token.
 */
export async function resolveSession(
  db: Kysely<Database>,
  request: FastifyRequest,
  token: string,
  now = Date.now(),
): Promise<{ principal: Principal; sessionId: string } | undefined> {
  const row = await sessionByToken(db, sha256Hex(token));
  if (!row || row.revoked_at !== null || row.status !== 'active' || !isPersonRole(row.role)) return undefined;
  if (now >= row.expires_at || now - row.last_seen_at > SESSION_IDLE_MS) {
    await revokeSession(db, row.id, now);
    return undefined;
  }
  if (!SAFE_METHODS.has(request.method)) {
    const csrf = request.headers['x-csrf-token'];
    if (typeof csrf !== 'string' || !sameDigest(csrf, row.csrf_digest))
      throw new Forbidden("This request needs the session's CSRF token in X-CSRF-Token.");
  }
  if (now - row.last_seen_at >= TOUCH_EVERY_MS) await touchSession(db, row.id, now);
  return { principal: personPrincipal({ id: row.user_id, name: row.name, role: row.role }), sessionId: row.id };
}

/** The principal of an active person by id (a person's access token stands for them as they are now). */
export async function activePerson(db: Kysely<Database>, id: string): Promise<Principal | undefined> {
  const row = await userById(db, id);
  if (!row || row.status !== 'active' || !isPersonRole(row.role)) return undefined;
  return personPrincipal({ id: row.id, name: row.name, role: row.role });
}
