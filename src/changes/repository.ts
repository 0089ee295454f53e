// Pending changes in the store (migration 034_people, pending_changes) and the settings table (one
// row per name): the four-eyes setting (one per environment) and the other features' settings
// (settingValue, storeSetting, ensureSetting: the network's, erasure's salt). A change's expiry is
// read, not swept: one past its expires_at is expired wherever it is shown, and stored so when
// someone tries to decide it.
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
  return (await fourEyesSetting(db, environment)).areas;
}

/** The setting as GET /api/v1/settings answers it: its areas, and who last changed it and when (ids). */
export async function fourEyesSetting(
  db: Kysely<Database>,
  environment: Environment,
): Promise<{ areas: FourEyesArea[]; updatedBy: string | null; updatedAt: number | null }> {
  const row = await db
    .selectFrom('settings')
    .select(['value', 'updated_by', 'updated_at'])
    .where('name', '=', settingName(environment))
    .executeTakeFirst();
  const stored = row ? (JSON.parse(row.value) as unknown) : [];
  return {
    areas: FOUR_EYES_AREAS.filter((a) => Array.isArray(stored) && stored.includes(a)),
    updatedBy: row?.updated_by ?? null,
    updatedAt: row?.updated_at === null || row?.updated_at === undefined ? null : Number(row.updated_at),
  };
}

/** Stores the areas; `changed` (who changed them and when) is kept only when they changed. */
export async function storeFourEyesAreas(
  db: Kysely<Database>,
  environment: Environment,
  areas: readonly FourEyesArea[],
  changed?: { by: string; at: number },
): Promise<void> {
  const value = JSON.stringify(FOUR_EYES_AREAS.filter((a) => areas.includes(a)));
  const who = changed ? { updated_by: changed.by, updated_at: changed.at } : {};
  await db
    .insertInto('settings')
    .values({ name: settingName(environment), value, ...who })
    .onConflict((oc) => oc.column('name').doUpdateSet({ value, ...who }))
    .execute();
}

/** A setting's stored value. */
export async function settingValue(db: Kysely<Database>, name: string) {
  return db.selectFrom('settings').select('value').where('name', '=', name).executeTakeFirst();
}

export async function storeSetting(db: Kysely<Database>, name: string, value: string): Promise<void> {
  await db
    .insertInto('settings')
    .values({ name, value })
    .onConflict((oc) => oc.column('name').doUpdateSet({ value }))
    .execute();
}

/** The setting's stored value, `value` stored first when it has none (the first caller's wins). */
export async function ensureSetting(db: Kysely<Database>, name: string, value: string): Promise<string> {
  await db
    .insertInto('settings')
    .values({ name, value })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db.selectFrom('settings').select('value').where('name', '=', name).executeTakeFirstOrThrow();
  return row.value;
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

export async function insertChange(db: Kysely<Database>, row: ChangeRow): Promise<void> {
  await db.insertInto('pending_changes').values(row).execute();
}

/**
 * Decides a change still pending and not past its expiry: true when this call did. A conditional
 * write, so of two deciders exactly one wins (four-eyes.ts).
 */
export async function decidePending(
  db: Kysely<Database>,
  id: string,
  decision: { status: 'approved' | 'rejected'; decidedBy: string; note: string | null },
  now: number,
): Promise<boolean> {
  const done = await db
    .updateTable('pending_changes')
    .set({ status: decision.status, decided_by: decision.decidedBy, decided_at: now, note: decision.note })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(done.numUpdatedRows) !== 0;
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
