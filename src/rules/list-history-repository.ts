// The lists' history as a rule test replays it (docs/rules.md, "Testing a rule"): every entry ever
// made to the named lists, removed, expired and deleted lists' included. The lists and
// list_entries tables are owned by list-repository.ts; this is their read by history, split off as
// an aggregate of its own. Takes the executor: a Kysely instance or a transaction.
import type { Kysely } from 'kysely';
import type { Environment } from '../lib/principal.ts';
import type { Database } from '../store/schema.ts';
import type { ListEntryRow } from './replay-lists.ts';

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/**
 * Every entry ever made, in the environment, to a list of one of these names — deleted lists'
 * included, with their deletion time, since a decision made before the deletion saw them.
 */
export async function listHistoryRows(
  db: Kysely<Database>,
  environment: Environment,
  names: readonly string[],
): Promise<ListEntryRow[]> {
  if (names.length === 0) return [];
  const rows = await db
    .selectFrom('list_entries')
    .innerJoin('lists', 'lists.id', 'list_entries.list_id')
    .select([
      'lists.name as list',
      'list_entries.value',
      'list_entries.added_at',
      'list_entries.removed_at',
      'list_entries.expires_at',
      'lists.deleted_at as list_deleted_at',
    ])
    .where('lists.environment', '=', environment)
    .where('lists.name', 'in', [...names])
    .execute();
  return rows.map((r) => ({
    list: r.list,
    value: r.value,
    added_at: Number(r.added_at),
    removed_at: num(r.removed_at),
    expires_at: num(r.expires_at),
    list_deleted_at: num(r.list_deleted_at),
  }));
}
