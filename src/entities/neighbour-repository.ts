// Reads of an entity's neighbours, the entities sharing an identifier with it, over `identifiers`,
// `identifier_stats` and `entities` (their owner: docs/architecture.md, "Where things go", a table;
// the writes are identifier-repository.ts's and entity-repository.ts's): the ring plan's indexed
// answers (rings/read.ts) and the entity.flagged fan-out's neighbours (webhooks/fanout.ts). Each
// takes the executor, a Kysely instance or the caller's transaction.
//
// The ring reads' joins are written as CROSS JOIN with their conditions in WHERE: SQLite then keeps
// `identifiers`, sought by its keys, as the outer loop rather than scanning `entities` for a long
// IN list; PostgreSQL plans both forms alike.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** The first `limit` identifiers of `entityIds` (by entity, type, hash), with their holders. */
export function ringIdentifiersOf(db: Db, environment: Environment, entityIds: string[], limit: number) {
  return db
    .selectFrom('identifiers as i')
    .crossJoin('identifier_stats as s')
    .whereRef('s.environment', '=', 'i.environment')
    .whereRef('s.id_type', '=', 'i.id_type')
    .whereRef('s.hash', '=', 'i.hash')
    .select(['i.id_type', 'i.hash', 'i.entity_id', 's.entities'])
    .where('i.environment', '=', environment)
    .where('i.entity_id', 'in', entityIds)
    .orderBy('i.entity_id')
    .orderBy('i.id_type')
    .orderBy('i.hash')
    .limit(limit)
    .execute();
}

/** The holders counts of the identifiers with a type among `types` and a hash among `hashes`. */
export function ringStatsAmong(db: Db, environment: Environment, types: string[], hashes: string[]) {
  return db
    .selectFrom('identifier_stats')
    .select(['id_type', 'hash', 'entities'])
    .where('environment', '=', environment)
    .where('id_type', 'in', types)
    .where('hash', 'in', hashes)
    .execute();
}

/**
 * The first `limit` holders (by type, hash, entity) of the identifiers with a type among `types`
 * and a hash among `hashes`, with the identifier's holders count and the holder's flags.
 */
export function ringHoldersAmong(db: Db, environment: Environment, types: string[], hashes: string[], limit: number) {
  return db
    .selectFrom('identifiers as i')
    .crossJoin('identifier_stats as s')
    .crossJoin('entities as e')
    .whereRef('s.environment', '=', 'i.environment')
    .whereRef('s.id_type', '=', 'i.id_type')
    .whereRef('s.hash', '=', 'i.hash')
    .whereRef('e.environment', '=', 'i.environment')
    .whereRef('e.entity_id', '=', 'i.entity_id')
    .select([
      'i.id_type',
      'i.hash',
      'i.entity_id',
      's.entities',
      'e.fraud_reports',
      'e.blocklisted',
      'e.chargebacks',
      'e.disputes_lost',
      'e.flagged_at',
    ])
    .where('i.environment', '=', environment)
    .where('i.id_type', 'in', types)
    .where('i.hash', 'in', hashes)
    .orderBy('i.id_type')
    .orderBy('i.hash')
    .orderBy('i.entity_id')
    .limit(limit)
    .execute();
}

/** The identifiers of `entityIds` held by at most `fanout` entities (hubs excluded: docs/api.md, "Rings"). */
export async function nonHubIdentifiersOf(
  db: Db,
  environment: Environment,
  entityIds: string[],
  fanout: number,
): Promise<{ id_type: string; hash: string; entity_id: string }[]> {
  return db
    .selectFrom('identifiers as i')
    .innerJoin('identifier_stats as s', (j) =>
      j
        .onRef('s.environment', '=', 'i.environment')
        .onRef('s.id_type', '=', 'i.id_type')
        .onRef('s.hash', '=', 'i.hash'),
    )
    .select(['i.id_type', 'i.hash', 'i.entity_id'])
    .where('i.environment', '=', environment)
    .where('i.entity_id', 'in', entityIds)
    .where('s.entities', '<=', fanout)
    .execute();
}

/** The first `limit` holders of one identifier, by entity id. */
export async function identifierHolders(
  db: Db,
  environment: Environment,
  type: string,
  hash: string,
  limit: number,
): Promise<{ entity_id: string }[]> {
  return db
    .selectFrom('identifiers')
    .select('entity_id')
    .where('environment', '=', environment)
    .where('id_type', '=', type)
    .where('hash', '=', hash)
    .orderBy('entity_id')
    .limit(limit)
    .execute();
}
