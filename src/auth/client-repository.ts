// The clients table's reads and writes (issue 41 item 1, one owner per table): clients.ts keeps
// the rules (id shape, secret hashing, logging, the deactivation's transaction) and calls these,
// as does the start-up in server.ts. Each takes the executor: a Kysely instance or a transaction.
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';

export type ClientRow = Database['clients'];

export async function insertClient(db: Kysely<Database>, row: ClientRow): Promise<void> {
  await db.insertInto('clients').values(row).execute();
}

export async function clientRow(db: Kysely<Database>, id: string): Promise<ClientRow | undefined> {
  return db.selectFrom('clients').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Every client, oldest first. */
export async function clientRows(db: Kysely<Database>): Promise<ClientRow[]> {
  return db.selectFrom('clients').selectAll().orderBy('created_at', 'asc').execute();
}

export async function markClientDeactivated(db: Kysely<Database>, id: string, now: number): Promise<void> {
  await db.updateTable('clients').set({ deactivated_at: now }).where('id', '=', id).execute();
}

/** The client's deactivation time alone (null while active); undefined for an unknown client. */
export async function clientDeactivatedAt(
  db: Kysely<Database>,
  id: string,
): Promise<{ deactivated_at: number | null } | undefined> {
  return db.selectFrom('clients').select('deactivated_at').where('id', '=', id).executeTakeFirst();
}

export async function deactivatedClientIdRows(db: Kysely<Database>): Promise<{ id: string }[]> {
  return db.selectFrom('clients').select('id').where('deactivated_at', 'is not', null).execute();
}

/** Replaces a client's scopes, stored space-separated. */
export async function setClientScopes(db: Kysely<Database>, id: string, scopes: string): Promise<void> {
  await db.updateTable('clients').set({ scopes }).where('id', '=', id).execute();
}

/** The names of the clients among `ids` (at most a chunk of them: store/chunks.ts). */
export function clientNamesIn(db: Kysely<Database>, ids: readonly string[]) {
  return db.selectFrom('clients').select(['id', 'name']).where('id', 'in', ids).execute();
}
