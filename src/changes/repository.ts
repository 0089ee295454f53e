// Pending changes in the store (migration 034_people, pending_changes) and the four-eyes setting
// (the settings table, one row per environment). A change's expiry is read, not swept: one past
// its expires_at is expired wherever it is shown, and stored so when someone tries to decide it.
import type { Kysely, Selectable } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { PendingChangesTable } from '../store/schema-people.ts';
import type { Actor, Environment } from '../lib/principal.ts';
import { pageOf, type Page } from '../lib/pagination.ts';
import { parseActor } from '../audit-log/schemas.ts';
import { FOUR_EYES_AREAS, type ChangeKind, type ChangeStatus, type ChangeView, type FourEyesArea } from './schemas.ts';

export type ChangeRow = Selectable<PendingChangesTable>;

/** The change as a decision sees it: the stored row with its JSON read back. */
export interface PendingChange {
  id: string;
  environment: Environment;
  kind: ChangeKind;
  target: string;
  payload: unknown;
  requestedBy: Actor;
}

const settingName = (environment: Environment) => `four_eyes:${environment}`;

export async function fourEyesAreas(db: Kysely<Database>, environment: Environment): Promise<FourEyesArea[]> {
  const row = await db
    .selectFrom('settings')
    .select('value')
    .where('name', '=', settingName(environment))
    .executeTakeFirst();
  if (!row) return [];
  const stored = JSON.parse(row.value) as unknown;
  return FOUR_EYES_AREAS.filter((a) => Array.isArray(stored) && stored.includes(a));
}

export async function storeFourEyesAreas(
  db: Kysely<Database>,
  environment: Environment,
  areas: readonly FourEyesArea[],
): Promise<void> {
  const value = JSON.stringify(FOUR_EYES_AREAS.filter((a) => areas.includes(a)));
  await db
    .insertInto('settings')
    .values({ name: settingName(environment), value })
    .onConflict((oc) => oc.column('name').doUpdateSet({ value }))
    .execute();
}

export const statusOf = (row: Pick<ChangeRow, 'status' | 'expires_at'>, now: number): ChangeStatus =>
  row.status === 'pending' && Number(row.expires_at) <= now ? 'expired' : (row.status as ChangeStatus);

const iso = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

export function changeView(row: ChangeRow, now: number): ChangeView {
  return {
    id: row.id,
    kind: row.kind as ChangeKind,
    status: statusOf(row, now),
    target: row.target,
    payload: row.payload === null ? null : (JSON.parse(row.payload) as unknown),
    requested_by: parseActor(row.requested_by),
    created_at: iso(row.created_at)!,
    expires_at: iso(row.expires_at)!,
    decided_by: row.decided_by === null ? null : parseActor(row.decided_by),
    decided_at: iso(row.decided_at),
    note: row.note,
  };
}

export function pendingChange(row: ChangeRow): PendingChange {
  return {
    id: row.id,
    environment: row.environment as Environment,
    kind: row.kind as ChangeKind,
    target: row.target,
    payload: row.payload === null ? null : (JSON.parse(row.payload) as unknown),
    requestedBy: parseActor(row.requested_by),
  };
}

export function getChange(db: Kysely<Database>, environment: Environment, id: string): Promise<ChangeRow | undefined> {
  return db
    .selectFrom('pending_changes')
    .selectAll()
    .where('environment', '=', environment)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Newest first; `status` as shown, so "pending" leaves out the ones past their expiry and "expired" takes them in. */
export async function listChanges(
  db: Kysely<Database>,
  environment: Environment,
  options: { status?: ChangeStatus; kind?: ChangeKind; limit: number; after?: string; now: number },
): Promise<Page<ChangeRow>> {
  const { status, now } = options;
  let q = db.selectFrom('pending_changes').selectAll().where('environment', '=', environment);
  if (status === 'pending') q = q.where('status', '=', 'pending').where('expires_at', '>', now);
  else if (status === 'expired')
    q = q.where((eb) =>
      eb.or([eb('status', '=', 'expired'), eb.and([eb('status', '=', 'pending'), eb('expires_at', '<=', now)])]),
    );
  else if (status !== undefined) q = q.where('status', '=', status);
  if (options.kind !== undefined) q = q.where('kind', '=', options.kind);
  if (options.after !== undefined) q = q.where('id', '<', options.after);
  return pageOf(
    await q
      .orderBy('id', 'desc')
      .limit(options.limit + 1)
      .execute(),
    options.limit,
  );
}

/** Stores a pending change past its expiry as expired (a no-op when someone decided it meanwhile). */
export async function markExpired(db: Kysely<Database>, id: string, now: number): Promise<void> {
  await db
    .updateTable('pending_changes')
    .set({ status: 'expired' })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('expires_at', '<=', now)
    .execute();
}
