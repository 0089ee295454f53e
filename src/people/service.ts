// People at the desk (docs/api.md, "People"): invitations, accepting them, signing in with the
// lockout, role changes and deactivation, each written to the audit log with who did it. The
// routes and the CLI (`vouch users …`) both call these; they throw PeopleError, which the routes map.
import { randomBytes } from 'node:crypto';
import type { Store } from '../store/db.ts';
import { sha256Hex } from '../lib/digest.ts';
import { newId } from '../lib/ids.ts';
import type { Actor } from '../lib/principal.ts';
import type { PersonRole } from '../lib/person-roles.ts';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import { recordAudit } from '../audit-log/repository.ts';
import { resolveActors, type Actors } from '../audit-log/actors.ts';
import { parseActor } from '../audit-log/schemas.ts';
import { dummyHash, hashPassword, needsRehash, verifyPasswordAtCost } from './passwords.ts';
import { disableTotp } from './totp.ts';
import {
  countFailedLogin,
  insertUser,
  newUserRow,
  revokeUserSessions,
  updateUser,
  userByEmail,
  userById,
  userByInvitation,
  type UserRow,
} from './repository.ts';

const INVITATION_TTL_MS = 72 * 3_600_000;
/** Consecutive wrong passwords before the account locks, and for how long (ASVS 2.2.1). */
const LOCKOUT = { failures: 5, ms: 15 * 60_000 } as const;
/** The failures the lockout allows, for a 429's RateLimit-Limit. */
export const LOCKOUT_FAILURES = LOCKOUT.failures;

export type PeopleErrorKind =
  'conflict' | 'not_found' | 'invalid_invitation' | 'wrong_credentials' | 'locked' | 'second_factor_required';

export class PeopleError extends Error {
  constructor(
    readonly kind: PeopleErrorKind,
    message: string,
    /** locked: when it may be tried again */
    readonly retryAt?: number,
  ) {
    super(message);
    this.name = 'PeopleError';
  }
}

/** A user as the API shows them: never a hash, a digest or a secret. */
export interface UserView {
  id: string;
  email: string;
  name: string;
  role: PersonRole;
  status: 'invited' | 'active' | 'deactivated';
  /** whether they sign in with a second factor (TOTP) */
  second_factor: boolean;
  created_at: string;
  /** who invited them, named as now (docs/api.md, "Audit log", "Who"); null for one who came by single sign-on */
  invited_by: Actor | null;
}

/**
 * The inviter's principal id: `created_by` keeps the inviter's actor as it was then; a person
 * single sign-on created is their own creator, and was invited by nobody.
 */
export function inviterId(row: Pick<UserRow, 'id' | 'created_by'>): string | null {
  const { id } = parseActor(row.created_by);
  return id === '' || id === row.id ? null : id;
}

/**
 * A user as answered; `actors` (resolveActors over the page's inviterId) names the inviter as they
 * are called now, else the name kept at the invitation stands.
 */
export function userViewWith(row: UserRow, actors: Actors | undefined): UserView {
  const inviter = inviterId(row);
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role as PersonRole,
    status: row.status as UserView['status'],
    second_factor: row.totp_enabled_at !== null,
    created_at: new Date(row.created_at).toISOString(),
    invited_by: inviter === null ? null : (actors?.get(inviter) ?? parseActor(row.created_by)),
  };
}

/** One user as answered, the inviter named as now. */
export async function namedUserView(db: Kysely<Database>, row: UserRow): Promise<UserView> {
  return userViewWith(row, await resolveActors(db, [inviterId(row)]));
}

/** E-mail addresses compare case-insensitively (what a person types at sign-in is not their invitation's case). */
export const normaliseEmail = (email: string): string => email.trim().toLowerCase();

function newInvitation(now: number): { token: string; digest: string; expiresAt: number } {
  const token = randomBytes(32).toString('base64url');
  return { token, digest: sha256Hex(token), expiresAt: now + INVITATION_TTL_MS };
}

export async function inviteUser(
  store: Store,
  actor: Actor,
  input: { email: string; name: string; role: PersonRole },
  now = Date.now(),
): Promise<{ user: UserView; token: string; expiresAt: number }> {
  const email = normaliseEmail(input.email);
  if (await userByEmail(store.db, email)) throw new PeopleError('conflict', `A user with e-mail ${email} exists.`);
  const invitation = newInvitation(now);
  const row = newUserRow(
    {
      id: newId('usr'),
      email,
      name: input.name,
      role: input.role,
      status: 'invited',
      invitation_digest: invitation.digest,
      invitation_expires_at: invitation.expiresAt,
      created_by: JSON.stringify(actor),
    },
    now,
  );

  try {
    await insertUser(store.db, row);
  } catch (err) {
    // the unique e-mail: another invitation of the same address won the race
    if (await userByEmail(store.db, email)) throw new PeopleError('conflict', `A user with e-mail ${email} exists.`);
    throw err;
  }
  await recordAudit(store, {
    environment: 'live',
    actor,
    action: 'user.invited',
    target: `user:${row.id}`,
    after: { email, name: input.name, role: input.role },
    at: now,
  });
  return { user: await namedUserView(store.db, row), token: invitation.token, expiresAt: invitation.expiresAt };
}

/** Sets the password of an invited user (hashed at `passwordCost`) and activates them; the token works once. */
export async function acceptInvitation(
  store: Store,
  token: string,
  password: string,
  passwordCost: number,
  now = Date.now(),
) {
  const row = await userByInvitation(store.db, sha256Hex(token));
  if (!row || row.status !== 'invited' || (row.invitation_expires_at ?? 0) <= now)
    throw new PeopleError('invalid_invitation', 'The invitation is unknown, used or expired: ask for a new one.');
  const passwordHash = await hashPassword(password, passwordCost);
  await updateUser(store.db, row.id, {
    password_hash: passwordHash,
    status: 'active',
    invitation_digest: null,
    invitation_expires_at: null,
    updated_at: now,
  });
  const actor: Actor = { type: 'user', id: row.id, name: row.name };
  await recordAudit(store, { environment: 'live', actor, action: 'user.activated', target: `user:${row.id}`, at: now });
  return namedUserView(store.db, { ...row, status: 'active' });
}

/**
 * Checks an e-mail and password. A wrong password counts towards the lockout; a locked account
 * answers `locked` whatever the password, until its time is up. An unknown address costs the
 * same hash as a known one and fails the same way, so a login does not reveal who has an account.
 */
export async function checkLogin(
  store: Store,
  emailInput: string,
  password: string,
  /** the hash's work factor now (VOUCH_PASSWORD_COST): a hash made with less is made again on success */
  passwordCost: number,
  /** the second factor, for a person who has one: a missing one asks for it, a wrong one counts as a failure */
  secondFactor?: (row: UserRow) => Promise<'ok' | 'missing' | 'wrong'>,
  now = Date.now(),
) {
  const email = normaliseEmail(emailInput);
  const row = await userByEmail(store.db, email);
  if (row && row.locked_until !== null && row.locked_until > now)
    throw new PeopleError('locked', 'Too many failed sign-ins: the account is locked for a while.', row.locked_until);
  const ok = await verifyPasswordAtCost(password, row?.password_hash ?? dummyHash(passwordCost), passwordCost);
  const second = row && ok && row.status === 'active' && row.totp_enabled_at !== null && secondFactor;
  const factor = second ? await second(row) : 'ok';
  if (factor === 'missing') throw new PeopleError('second_factor_required', 'This account needs its second factor.');
  if (!row || !ok || row.status !== 'active' || factor === 'wrong') {
    if (row) await countFailedLogin(store.db, row.id, LOCKOUT.failures, now + LOCKOUT.ms);
    await recordAudit(store, {
      environment: 'live',
      actor: row ? { type: 'user', id: row.id, name: row.name } : { type: 'user', id: 'unknown', name: 'unknown' },
      action: 'user.login_failed',
      target: row ? `user:${row.id}` : null,
      after: row
        ? { status: row.status, ...(factor === 'wrong' ? { second_factor: 'wrong' } : {}) }
        : { email_digest: sha256Hex(email).slice(0, 16) },
      at: now,
    });
    throw new PeopleError('wrong_credentials', 'Wrong e-mail or password.');
  }
  const rehash = row.password_hash !== null && needsRehash(row.password_hash, passwordCost);
  if (row.failed_logins > 0 || row.locked_until !== null || rehash)
    await updateUser(store.db, row.id, {
      failed_logins: 0,
      locked_until: null,
      ...(rehash ? { password_hash: await hashPassword(password, passwordCost) } : {}),
    });
  return row;
}

export async function changeUser(
  store: Store,
  actor: Actor,
  id: string,
  changes: { role?: PersonRole; status?: 'active' | 'deactivated'; name?: string; second_factor?: 'off' },
  now = Date.now(),
): Promise<UserView> {
  const found = await userById(store.db, id);
  if (!found) throw new PeopleError('not_found', 'No such user.');
  let row = found;
  if (changes.second_factor === 'off' && row.totp_enabled_at !== null) {
    row = { ...row, totp_secret: null, totp_enabled_at: null };
    // an admin resetting a lost device: the person enrols again at their next sign-in
    await disableTotp(store.db, id, now);
    await recordAudit(store, {
      environment: 'live',
      actor,
      action: 'user.second_factor_reset',
      target: `user:${id}`,
      at: now,
    });
  }
  const next: Partial<UserRow> = { updated_at: now };
  const before: Record<string, unknown> = {};
  const after: Record<string, unknown> = {};
  for (const key of ['role', 'status', 'name'] as const) {
    const value = changes[key];
    if (value === undefined || value === row[key]) continue;
    // an invited user becomes active by accepting the invitation, never by a PATCH
    if (key === 'status' && value === 'active' && row.status === 'invited') continue;
    next[key] = value;
    before[key] = row[key];
    after[key] = value;
  }
  if (Object.keys(after).length === 0) return namedUserView(store.db, row);
  await updateUser(store.db, id, next);
  // a new role or a deactivation ends the sessions that were opened under the old one
  if (after.role !== undefined || after.status === 'deactivated') await revokeUserSessions(store.db, id, now);
  const action =
    after.status === 'deactivated' ? 'user.deactivated' : after.role ? 'user.role_changed' : 'user.changed';
  await recordAudit(store, { environment: 'live', actor, action, target: `user:${id}`, before, after, at: now });
  return namedUserView(store.db, { ...row, ...next });
}
