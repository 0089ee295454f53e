// The lists and list_entries tables' one owner (docs/api.md, "Rules and lists"; issue 41 item 1):
// the list API's pages, the registry's loads, and the statements of lists.ts's changes and
// list-bound.ts's counts and sweep. An entry is present until removed or expired; it is never
// deleted.
import type { Insertable, Selectable } from 'kysely';
import type { ListsTable } from '../store/schema.ts';
import type { ListEntriesTable } from '../store/schema-rules.ts';
import type { Environment } from '../lib/principal.ts';
import { chunks } from '../store/chunks.ts';
import { pageOf, type Page } from '../lib/pagination.ts';
import type { Db } from './revisions.ts';
import type { ListKinds } from './compile.ts';

export type ListRow = Selectable<ListsTable>;

export function getList(db: Db, environment: Environment, name: string): Promise<ListRow | undefined> {
  return db
    .selectFrom('lists')
    .selectAll()
    .where('environment', '=', environment)
    .where('name', '=', name)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

/** The environment's lists (name → kind), which a condition's in_list may name. */
export async function listKinds(db: Db, environment: Environment): Promise<ListKinds> {
  const rows = await db
    .selectFrom('lists')
    .select(['name', 'kind'])
    .where('environment', '=', environment)
    .where('deleted_at', 'is', null)
    .execute();
  return new Map(rows.map((r) => [r.name, r.kind]));
}

/** By name; the cursor is the last name. */
export async function listLists(
  db: Db,
  environment: Environment,
  limit: number,
  after?: string,
): Promise<Page<ListRow>> {
  let q = db.selectFrom('lists').selectAll().where('environment', '=', environment).where('deleted_at', 'is', null);
  if (after !== undefined) q = q.where('name', '>', after);
  return pageOf(
    await q
      .orderBy('name')
      .limit(limit + 1)
      .execute(),
    limit,
  );
}

/** Present entries per list id, at `now`. */
export async function presentCounts(db: Db, listIds: readonly string[], now: number): Promise<Map<string, number>> {
  if (listIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('list_entries')
    .select(['list_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('list_id', 'in', [...listIds])
    .where('removed_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .groupBy('list_id')
    .execute();
  return new Map(rows.map((r) => [r.list_id, Number(r.n)]));
}

type EntryRow = { value: string; reason: string | null; added_at: number; added_by: string; expires_at: number | null };

/** The list's present entries at `now`, by value; the cursor is the last value. */
export async function listEntries(
  db: Db,
  listId: string,
  now: number,
  limit: number,
  after?: string,
): Promise<Page<EntryRow>> {
  let q = db
    .selectFrom('list_entries')
    .select(['value', 'reason', 'added_at', 'added_by', 'expires_at'])
    .where('list_id', '=', listId)
    .where('removed_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
  if (after !== undefined) q = q.where('value', '>', after);
  const rows = await q
    .orderBy('value')
    .limit(limit + 1)
    .execute();
  return pageOf(
    rows.map((r) => ({
      ...r,
      added_at: Number(r.added_at),
      expires_at: r.expires_at === null ? null : Number(r.expires_at),
    })),
    limit,
  );
}

/** The environment's lists (id → name), which the registry keys its entries by. */
export async function liveLists(db: Db, environment: Environment): Promise<Map<string, string>> {
  const rows = await db
    .selectFrom('lists')
    .select(['id', 'name'])
    .where('environment', '=', environment)
    .where('deleted_at', 'is', null)
    .execute();
  return new Map(rows.map((r) => [r.id, r.name]));
}

export interface EntryChange {
  list_id: string;
  value: string;
  expires_at: number | null;
  /** false: the entry was removed (its value is absent unless another entry of it is present) */
  present: boolean;
}

/**
 * The entries of these lists: every present one at `now` (`since` undefined), or every one changed
 * after revision `since`, removed and expired ones included.
 */
export async function entryChanges(
  db: Db,
  listIds: readonly string[],
  since?: number,
  now = Date.now(),
): Promise<EntryChange[]> {
  const out: EntryChange[] = [];
  for (const part of chunks(listIds)) {
    let q = db
      .selectFrom('list_entries')
      .select(['list_id', 'value', 'expires_at', 'removed_at'])
      .where('list_id', 'in', part);
    q =
      since === undefined
        ? q
            .where('removed_at', 'is', null)
            .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
        : q.where('changed_revision', '>', since);
    for (const r of await q.execute())
      out.push({
        list_id: r.list_id,
        value: r.value,
        expires_at: r.expires_at === null ? null : Number(r.expires_at),
        present: r.removed_at === null,
      });
  }
  return out;
}

/** The kind of the environment's list `name`, when it has one (a review's add_to_list, reviews/resolve.ts). */
export function listKind(db: Db, environment: Environment, name: string): Promise<{ kind: string } | undefined> {
  return db
    .selectFrom('lists')
    .select(['kind'])
    .where('environment', '=', environment)
    .where('name', '=', name)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function insertList(db: Db, row: ListRow): Promise<void> {
  await db.insertInto('lists').values(row).execute();
}

/** A deleted list keeps its entries (a rule test reads them); its name can be taken again. */
export async function markListDeleted(db: Db, id: string, at: number): Promise<void> {
  await db.updateTable('lists').set({ deleted_at: at }).where('id', '=', id).execute();
}

/** Of `values` (a chunk), those with an entry not removed on the list, expired or not. */
export function unremovedEntries(db: Db, listId: string, values: readonly string[]) {
  return db
    .selectFrom('list_entries')
    .select(['value', 'expires_at', 'added_at'])
    .where('list_id', '=', listId)
    .where('removed_at', 'is', null)
    .where('value', 'in', values)
    .execute();
}

/** Ends the entries not removed of `values` (a chunk) now, by `by`, at `revision`. */
export async function endEntries(
  db: Db,
  listId: string,
  values: readonly string[],
  by: string,
  revision: number,
  now: number,
): Promise<void> {
  await db
    .updateTable('list_entries')
    .set({ removed_at: now, removed_by: by, changed_revision: revision })
    .where('list_id', '=', listId)
    .where('removed_at', 'is', null)
    .where('value', 'in', values)
    .execute();
}

/** Of `values` (a chunk), the latest added_at of each at or after `now`. */
export function entriesAddedSince(db: Db, listId: string, values: readonly string[], now: number) {
  return db
    .selectFrom('list_entries')
    .select(['value', (eb) => eb.fn.max('added_at').as('at')])
    .where('list_id', '=', listId)
    .where('value', 'in', values)
    .where('added_at', '>=', now)
    .groupBy('value')
    .execute();
}

export async function insertEntries(db: Db, rows: ReadonlyArray<Insertable<ListEntriesTable>>): Promise<void> {
  await db.insertInto('list_entries').values(rows).execute();
}

/** Removes the value's present entry at `now`: the rows changed, 0 when there is none. */
export async function removePresentEntry(
  db: Db,
  listId: string,
  value: string,
  by: string,
  revision: number,
  now: number,
): Promise<number> {
  const done = await db
    .updateTable('list_entries')
    .set({ removed_at: now, removed_by: by, changed_revision: revision })
    .where('list_id', '=', listId)
    .where('value', '=', value)
    .where('removed_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .executeTakeFirst();
  return Number(done.numUpdatedRows);
}

/** What the environment's lists hold, from the counts each keeps (031_list_held). */
export async function heldByLists(db: Db, environment: Environment): Promise<{ entries: number; chars: number }> {
  const row = await db
    .selectFrom('lists')
    .select((eb) => [eb.fn.sum<number>('held_entries').as('entries'), eb.fn.sum<number>('held_chars').as('chars')])
    .where('environment', '=', environment)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return { entries: Number(row?.entries ?? 0), chars: Number(row?.chars ?? 0) };
}

export function moveHeld(db: Db, listId: string, entries: number, chars: number) {
  return db
    .updateTable('lists')
    .set((eb) => ({ held_entries: eb('held_entries', '+', entries), held_chars: eb('held_chars', '+', chars) }))
    .where('id', '=', listId)
    .execute();
}

export function liveListIds(db: Db, environment: Environment) {
  return db
    .selectFrom('lists')
    .select('id')
    .where('environment', '=', environment)
    .where('deleted_at', 'is', null)
    .execute();
}

/** Up to `limit` values of the list's entries expired at `now` and not yet removed. */
export async function expiredValues(db: Db, listId: string, now: number, limit: number): Promise<string[]> {
  return (
    await db
      .selectFrom('list_entries')
      .select('value')
      .where('list_id', '=', listId)
      .where('removed_at', 'is', null)
      .where('expires_at', 'is not', null)
      .where('expires_at', '<=', now)
      .limit(limit)
      .execute()
  ).map((r) => r.value);
}

/** Marks the entries of `values` (a chunk) removed at their expiry, by `by`. */
export async function removeAtExpiry(db: Db, listId: string, values: readonly string[], by: string): Promise<void> {
  await db
    .updateTable('list_entries')
    .set((eb) => ({ removed_at: eb.ref('expires_at'), removed_by: by }))
    .where('list_id', '=', listId)
    .where('removed_at', 'is', null)
    .where('value', 'in', values)
    .execute();
}
