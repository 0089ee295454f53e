// Reading lists and their entries (docs/api.md, "Rules and lists"): the list API's pages and the
// registry's loads. An entry is present until removed or expired; the writes are in lists.ts.
import type { Selectable } from 'kysely';
import type { ListsTable } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';
import { chunks } from '../store/chunks.ts';
import { pageOf, type Page } from '../lib/pagination.ts';
import type { Db } from './revisions.ts';

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
