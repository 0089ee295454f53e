// The users and user_sessions tables (migration 034_people): their one owner. Digests only: an
// invitation token, a session token and a CSRF token are never stored, only their SHA-256.
import type { Kysely, Selectable } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { UsersTable } from '../store/schema-people.ts';

export type UserRow = Selectable<UsersTable>;
type Db = Kysely<Database>;

/** A new user's row: the given fields, and every credential column blank (no password, no second factor). */
export function newUserRow(
  fields: Pick<UserRow, 'id' | 'email' | 'name' | 'role' | 'status' | 'created_by'> &
    Partial<Pick<UserRow, 'invitation_digest' | 'invitation_expires_at'>>,
  now: number,
): UserRow {
  return {
    password_hash: null,
    invitation_digest: null,
    invitation_expires_at: null,
    failed_logins: 0,
    locked_until: null,
    totp_secret: null,
    totp_pending: null,
    totp_enabled_at: null,
    totp_last_step: null,
    recovery_codes: null,
    ...fields,
    created_at: now,
    updated_at: now,
  };
}

export function insertUser(db: Db, row: UserRow) {
  return db.insertInto('users').values(row).execute();
}

export function userById(db: Db, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export function userByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
}

export function userByInvitation(db: Db, digest: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('invitation_digest', '=', digest).executeTakeFirst();
}

/** Users by id, after `after` (the cursor), `limit` of them. */
export function listUsers(db: Db, after: string | undefined, limit: number): Promise<UserRow[]> {
  let q = db.selectFrom('users').selectAll().orderBy('id').limit(limit);
  if (after !== undefined) q = q.where('id', '>', after);
  return q.execute();
}

export async function updateUser(
  db: Db,
  id: string,
  changes: Partial<Omit<UserRow, 'id' | 'email' | 'created_at' | 'created_by'>>,
): Promise<void> {
  await db.updateTable('users').set(changes).where('id', '=', id).execute();
}

/**
 * One more failed login; at `limit` consecutive failures the account locks until `lockedUntil`
 * (and the count starts again). Atomic, so parallel guesses cannot slip between read and write.
 */
export async function countFailedLogin(db: Db, id: string, limit: number, lockedUntil: number): Promise<void> {
  await db
    .updateTable('users')
    .set((eb) => ({ failed_logins: eb('failed_logins', '+', 1) }))
    .where('id', '=', id)
    .execute();
  await db
    .updateTable('users')
    .set({ failed_logins: 0, locked_until: lockedUntil })
    .where('id', '=', id)
    .where('failed_logins', '>=', limit)
    .execute();
}

export interface SessionRow {
  id: string;
  user_id: string;
  csrf_digest: string;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
}

export function insertSession(db: Db, row: SessionRow & { token_digest: string }) {
  return db
    .insertInto('user_sessions')
    .values({ ...row, revoked_at: null })
    .execute();
}

/** A live session by its token's digest, with its user. */
export function sessionByToken(db: Db, digest: string) {
  return db
    .selectFrom('user_sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select([
      's.id',
      's.user_id',
      's.csrf_digest',
      's.created_at',
      's.last_seen_at',
      's.expires_at',
      's.revoked_at',
      'u.name',
      'u.email',
      'u.role',
      'u.status',
    ])
    .where('s.token_digest', '=', digest)
    .executeTakeFirst();
}

export async function touchSession(db: Db, id: string, at: number): Promise<void> {
  await db.updateTable('user_sessions').set({ last_seen_at: at }).where('id', '=', id).execute();
}

export async function revokeSession(db: Db, id: string, at: number): Promise<void> {
  await db
    .updateTable('user_sessions')
    .set({ revoked_at: at })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .execute();
}

/** A live session's new CSRF token (its digest), found by its session token's digest. */
export async function setSessionCsrf(db: Db, tokenDigest: string, csrfDigest: string): Promise<void> {
  await db
    .updateTable('user_sessions')
    .set({ csrf_digest: csrfDigest })
    .where('token_digest', '=', tokenDigest)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Ends every session of a user (deactivation, a role change, a new password). */
export async function revokeUserSessions(db: Db, userId: string, at: number): Promise<void> {
  await db
    .updateTable('user_sessions')
    .set({ revoked_at: at })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .execute();
}

/**
 * Takes a TOTP time step for a user when it is later than the last one taken: true for the one
 * caller that moved it, so two sign-ins racing with one code cannot both pass.
 */
export async function takeTotpStep(db: Db, id: string, step: number): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ totp_last_step: step })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Replaces the recovery codes only if they are still `before`: a code is used up once, whoever races. */
export async function swapRecoveryCodes(db: Db, id: string, before: string, after: string): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ recovery_codes: after })
    .where('id', '=', id)
    .where('recovery_codes', '=', before)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The names of the users among `ids` (at most a chunk of them: store/chunks.ts). */
export function userNamesIn(db: Db, ids: readonly string[]) {
  return db.selectFrom('users').select(['id', 'name']).where('id', 'in', ids).execute();
}
