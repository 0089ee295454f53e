// The owner of `identifiers` (which entity holds which identifier hash) and `identifier_stats` (per
// identifier, its holders, how many are flagged, and a version cached scores check)
// (docs/architecture.md, "Where things go", a table): ingestion's links and counts
// (trust/linkage.ts), erasure's removals, the entity route's list and what the network publishes
// and resolves. Reads of an entity's neighbours (the ring graph, the entity.flagged fan-out) are in
// neighbour-repository.ts. Each function takes the executor, a Kysely instance or the caller's
// transaction, so the callers' transactions are unchanged.
import { sql, type Insertable, type Kysely, type Transaction } from 'kysely';
import type { Database, IdentifiersTable } from '../store/schema.ts';
import { FLAG_COLUMNS, FLAGGED_HOLDER } from './entity-repository.ts';
import type { Environment } from '../lib/principal.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** The links `entityIds` hold. */
export function linksOf(trx: Db, environment: Environment, entityIds: string[]) {
  return trx
    .selectFrom('identifiers')
    .select(['id_type', 'hash', 'entity_id'])
    .where('environment', '=', environment)
    .where('entity_id', 'in', entityIds)
    .execute();
}

/** Inserts the links; returns only those that were new (one already stored returns nothing). */
export function insertNewLinks(trx: Db, rows: IdentifiersTable[]) {
  return trx
    .insertInto('identifiers')
    .values(rows)
    .onConflict((oc) => oc.columns(['environment', 'id_type', 'hash', 'entity_id']).doNothing())
    .returning(['id_type', 'hash', 'entity_id'])
    .execute();
}

/** Adds the deltas to identifier_stats (a new row takes them as they are), each changed row's version moving. */
export async function addIdentifierStats(trx: Db, rows: Array<Insertable<Database['identifier_stats']>>) {
  await trx
    .insertInto('identifier_stats')
    .values(rows)
    .onConflict((oc) =>
      oc.columns(['environment', 'id_type', 'hash']).doUpdateSet({
        entities: sql`identifier_stats.entities + excluded.entities`,
        flagged_entities: sql`identifier_stats.flagged_entities + excluded.flagged_entities`,
        version: sql`identifier_stats.version + 1`,
      }),
    )
    .execute();
}

/** The identifiers one entity holds, in key order. */
export function identifiersHeldBy(trx: Db, environment: Environment, id: string) {
  return trx
    .selectFrom('identifiers')
    .select(['id_type', 'hash'])
    .where('environment', '=', environment)
    .where('entity_id', '=', id)
    .orderBy('id_type')
    .orderBy('hash')
    .execute();
}

/** One holder (flagged or not) leaves the identifier; its version moves. */
export async function dropIdentifierHolder(
  trx: Db,
  environment: Environment,
  idType: string,
  hash: string,
  flagged: boolean,
): Promise<void> {
  await trx
    .updateTable('identifier_stats')
    .set({
      entities: sql`entities - 1`,
      flagged_entities: flagged ? sql`flagged_entities - 1` : sql`flagged_entities`,
      version: sql`version + 1`,
    })
    .where('environment', '=', environment)
    .where('id_type', '=', idType)
    .where('hash', '=', hash)
    .execute();
}

export async function deleteLinksOf(trx: Db, environment: Environment, id: string): Promise<void> {
  await trx.deleteFrom('identifiers').where('environment', '=', environment).where('entity_id', '=', id).execute();
}

/**
 * The first `limit` identifiers of the entity in key order, each with its holders from
 * identifier_stats in the same query (no scan of the other holders); null without a stats row.
 */
export function identifiersWithHolders(db: Db, environment: Environment, id: string, limit: number) {
  return db
    .selectFrom('identifiers')
    .leftJoin('identifier_stats', (join) =>
      join
        .onRef('identifier_stats.environment', '=', 'identifiers.environment')
        .onRef('identifier_stats.id_type', '=', 'identifiers.id_type')
        .onRef('identifier_stats.hash', '=', 'identifiers.hash'),
    )
    .select(['identifiers.id_type', 'identifiers.hash', 'identifier_stats.entities'])
    .where('identifiers.environment', '=', environment)
    .where('identifiers.entity_id', '=', id)
    .orderBy('identifiers.id_type')
    .orderBy('identifiers.hash')
    .limit(limit)
    .execute();
}

/** The flagged live holders of the identifiers of `idType` among `hashes`, with their flag counts. */
export async function flaggedHoldersOf(db: Db, idType: string, hashes: string[]) {
  return db
    .selectFrom('identifiers as i')
    .innerJoin('entities as e', (j) =>
      j.onRef('e.environment', '=', 'i.environment').onRef('e.entity_id', '=', 'i.entity_id'),
    )
    .select(['i.hash', ...FLAG_COLUMNS])
    .where('i.environment', '=', 'live')
    .where('i.id_type', '=', idType)
    .where('i.hash', 'in', hashes)
    .where(FLAGGED_HOLDER)
    .execute();
}

/** Every live identifier with a flagged holder. */
export async function flaggedIdentifiers(db: Db) {
  return db
    .selectFrom('identifiers as i')
    .innerJoin('entities as e', (j) =>
      j.onRef('e.environment', '=', 'i.environment').onRef('e.entity_id', '=', 'i.entity_id'),
    )
    .select(['i.id_type', 'i.hash'])
    .distinct()
    .where('i.environment', '=', 'live')
    .where(FLAGGED_HOLDER)
    .execute();
}

/** The live identifiers linked at or after `since`. */
export async function identifiersLinkedSince(db: Db, since: number) {
  return db
    .selectFrom('identifiers')
    .select(['id_type', 'hash'])
    .where('environment', '=', 'live')
    .where('created_at', '>=', since)
    .execute();
}

/** The live identifiers of `entityIds`. */
export async function identifiersOfEntities(db: Db, entityIds: string[]) {
  return db
    .selectFrom('identifiers')
    .select(['id_type', 'hash'])
    .where('environment', '=', 'live')
    .where('entity_id', 'in', entityIds)
    .execute();
}

/** The live identifiers of an entity, as the network's signal names them. */
export async function liveIdentifiersOf(db: Db, entityId: string) {
  return db
    .selectFrom('identifiers')
    .select(['id_type as type', 'hash'])
    .where('environment', '=', 'live')
    .where('entity_id', '=', entityId)
    .execute();
}
