// The SQLite direct path's point reads and prune of the entity tables (trust/ingest-direct.ts;
// store/direct.ts), whose owner this folder is (docs/architecture.md, "Where things go", a table):
// each a PreparedQuery (store/prepared.ts) compiled once per store, which the caller binds and runs
// on the direct connection inside its transaction. The direct path's grouped inserts are specs to
// store/row-inserts.ts, written beside the batch logic in trust/ingest-direct.ts.
import type { Kysely } from 'kysely';
import type { Database, EntitiesTable, EntityCurrencyTable, IdentifiersTable } from '../store/schema.ts';
import { PreparedQuery } from '../store/prepared.ts';
import type { Environment } from '../lib/principal.ts';

type Link = Pick<IdentifiersTable, 'id_type' | 'hash' | 'entity_id'>;

/** The point reads and the prune (environment, entity or event id, …), compiled once per store. */
export interface DirectStatements {
  storedPayload: PreparedQuery<[string, string, string], { event_id: string; payload: string }>;
  entity: PreparedQuery<[string, string], EntitiesTable>;
  currencies: PreparedQuery<[string, string], EntityCurrencyTable>;
  held: PreparedQuery<[string, string], Link>;
  prune: PreparedQuery<[string, string, number], never>;
}
const compiled = new WeakMap<Kysely<Database>, DirectStatements>();

export function directStatements(db: Kysely<Database>): DirectStatements {
  let s = compiled.get(db);
  if (s) return s;
  // Placeholders stand for the arguments (prepared.ts): the builder's types do not matter here.
  const env = (v: unknown) => v as Environment;
  s = {
    storedPayload: new PreparedQuery(db as never, 3, (_db, e, client, id) =>
      db
        .selectFrom('events')
        .select(['event_id', 'payload'])
        .where('environment', '=', env(e))
        .where('client_id', '=', client as string)
        .where('event_id', '=', id as string),
    ),
    entity: new PreparedQuery(db as never, 2, (_db, e, id) =>
      db
        .selectFrom('entities')
        .selectAll()
        .where('environment', '=', env(e))
        .where('entity_id', '=', id as string),
    ),
    currencies: new PreparedQuery(db as never, 2, (_db, e, id) =>
      db
        .selectFrom('entity_currency')
        .selectAll()
        .where('environment', '=', env(e))
        .where('entity_id', '=', id as string),
    ),
    held: new PreparedQuery(db as never, 2, (_db, e, id) =>
      db
        .selectFrom('identifiers')
        .select(['id_type', 'hash', 'entity_id'])
        .where('environment', '=', env(e))
        .where('entity_id', '=', id as string),
    ),
    prune: new PreparedQuery(db as never, 3, (_db, e, id, before) =>
      db
        .deleteFrom('entity_hourly')
        .where('environment', '=', env(e))
        .where('entity_id', '=', id as string)
        .where('bucket', '<', before as number),
    ),
  } as DirectStatements;
  compiled.set(db, s);
  return s;
}
