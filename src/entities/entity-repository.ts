// The `entities` table's owner (docs/architecture.md, "Where things go", a table): one row per
// entity and environment, the aggregate counts ingestion keeps (trust/aggregate-state.ts) and every
// feature reads — the entity routes, the timeline, the ring graph's root, the network's flagged
// entities, erasure. Each function takes the executor, a Kysely instance or the caller's
// transaction, so the callers' transactions and locks are unchanged; a read the caller locks
// (store/locks.ts, lockForUpdate) comes back unexecuted.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, EntitiesTable } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** The flag counts the network publishes (docs/network.md), read from `entities as e`. */
export const FLAG_COLUMNS = [
  'e.fraud_reports',
  'e.chargebacks',
  'e.blocklisted',
  'e.disputes_lost',
  'e.flagged_at',
  'e.last_event_at',
] as const;

/** The holder (entities as e) has a flag of a kind a label carries. */
export const FLAGGED_HOLDER = sql<boolean>`(e.fraud_reports > 0 or e.chargebacks > 0 or e.blocklisted = 1 or e.disputes_lost > 0)`;

/**
 * Inserts placeholder rows for a batch's entities. With `lock` (PostgreSQL) an upsert that changes
 * nothing, so new and existing rows alike are locked in the order of the VALUES list.
 */
export async function insertBlankEntities(trx: Transaction<Database>, rows: EntitiesTable[], lock: boolean) {
  const insert = trx.insertInto('entities').values(rows);
  if (lock)
    await insert
      .onConflict((oc) =>
        oc.columns(['environment', 'entity_id']).doUpdateSet((eb) => ({ version: eb.ref('entities.version') })),
      )
      .execute();
  else await insert.onConflict((oc) => oc.columns(['environment', 'entity_id']).doNothing()).execute();
}

/** The stored rows of `ids`. */
export function entitiesIn(trx: Db, environment: Environment, ids: string[]) {
  return trx
    .selectFrom('entities')
    .selectAll()
    .where('environment', '=', environment)
    .where('entity_id', 'in', ids)
    .execute();
}

/** Writes the rows back, every column but the key replaced. */
export async function upsertEntities(trx: Transaction<Database>, rows: EntitiesTable[]): Promise<void> {
  await trx
    .insertInto('entities')
    .values(rows)
    .onConflict((oc) =>
      oc.columns(['environment', 'entity_id']).doUpdateSet((eb) => {
        const cols = Object.keys(rows[0]!).filter((k) => k !== 'entity_id' && k !== 'environment') as Array<
          keyof EntitiesTable
        >;
        return Object.fromEntries(cols.map((c) => [c, eb.ref(`excluded.${c}`)]));
      }),
    )
    .execute();
}

/** The entity's flags, as a query the caller locks (erasure locks the row as ingestion does). */
export function entityFlagsQuery(trx: Db, environment: Environment, id: string) {
  return trx
    .selectFrom('entities')
    .select(['fraud_reports', 'blocklisted'])
    .where('environment', '=', environment)
    .where('entity_id', '=', id);
}

export async function deleteEntity(trx: Db, environment: Environment, id: string): Promise<void> {
  await trx.deleteFrom('entities').where('environment', '=', environment).where('entity_id', '=', id).execute();
}

/** One entity's row (GET /api/v1/trust/entities/{entity_id}). */
export function entityRow(db: Db, environment: Environment, id: string) {
  return db
    .selectFrom('entities')
    .selectAll()
    .where('environment', '=', environment)
    .where('entity_id', '=', id)
    .executeTakeFirst();
}

/** One entity's version (0 or none: no recorded history). */
export function entityVersion(db: Db, environment: Environment, id: string) {
  return db
    .selectFrom('entities')
    .select('version')
    .where('environment', '=', environment)
    .where('entity_id', '=', id)
    .executeTakeFirst();
}

/** A ring graph's root: its version and flags. */
export function ringRootOf(db: Db, environment: Environment, id: string) {
  return db
    .selectFrom('entities')
    .select(['version', 'fraud_reports', 'blocklisted', 'chargebacks', 'disputes_lost', 'flagged_at'])
    .where('environment', '=', environment)
    .where('entity_id', '=', id)
    .executeTakeFirst();
}

/** The flagged live entities among `entityIds`, with their flag counts (the network's `entity` type). */
export async function flaggedEntitiesAmong(db: Db, entityIds: string[]) {
  return db
    .selectFrom('entities as e')
    .select(['e.entity_id', ...FLAG_COLUMNS])
    .where('e.environment', '=', 'live')
    .where('e.entity_id', 'in', entityIds)
    .where(FLAGGED_HOLDER)
    .execute();
}

/** Every flagged live entity. */
export async function flaggedEntityIds(db: Db) {
  return db
    .selectFrom('entities as e')
    .select('e.entity_id')
    .where('e.environment', '=', 'live')
    .where(FLAGGED_HOLDER)
    .execute();
}
