// The owner of an entity's aggregate tables beside its row (docs/architecture.md, "Where things
// go", a table): `entity_currency` (per-currency amount statistics), `entity_hourly` (ten-minute
// velocity buckets) and `entity_counterparties` (trades per counterparty pair). Ingestion reads and
// writes them back (trust/aggregate-state.ts), the entity route reads the volumes, erasure deletes
// an entity's and renames the counterparty rows naming it. Each function takes the executor, a
// Kysely instance or the caller's transaction, so the callers' transactions are unchanged. The
// SQLite direct path's prepared statements (trust/ingest-direct.ts) keep their compiled shapes
// where they are; the profile's reads are built by entities/profile-repository.ts.
import { sql, type Insertable, type Kysely, type Transaction } from 'kysely';
import type { Database, EntityCurrencyTable } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** The currency rows of `entityIds`. */
export function currenciesOf(trx: Db, environment: Environment, entityIds: string[]) {
  return trx
    .selectFrom('entity_currency')
    .selectAll()
    .where('environment', '=', environment)
    .where('entity_id', 'in', entityIds)
    .execute();
}

/** Writes the currency rows back, their statistics replaced. */
export async function upsertCurrencies(trx: Db, rows: EntityCurrencyTable[]): Promise<void> {
  await trx
    .insertInto('entity_currency')
    .values(rows)
    .onConflict((oc) =>
      oc.columns(['environment', 'entity_id', 'currency']).doUpdateSet((eb) => ({
        trades: eb.ref('excluded.trades'),
        volume: eb.ref('excluded.volume'),
        log_mean: eb.ref('excluded.log_mean'),
        log_m2: eb.ref('excluded.log_m2'),
      })),
    )
    .execute();
}

/** Adds the buckets' trades and volume to the stored ones. */
export async function addHourly(trx: Db, rows: Array<Insertable<Database['entity_hourly']>>): Promise<void> {
  await trx
    .insertInto('entity_hourly')
    .values(rows)
    .onConflict((oc) =>
      oc.columns(['environment', 'entity_id', 'bucket', 'currency']).doUpdateSet({
        trades: sql`entity_hourly.trades + excluded.trades`,
        volume: sql`entity_hourly.volume + excluded.volume`,
      }),
    )
    .execute();
}

/** Deletes the buckets of `entityIds` older than `before`. */
export async function pruneHourly(trx: Db, environment: Environment, entityIds: string[], before: number) {
  await trx
    .deleteFrom('entity_hourly')
    .where('environment', '=', environment)
    .where('entity_id', 'in', entityIds)
    .where('bucket', '<', before)
    .execute();
}

/** Adds the pairs' trades to the stored ones. */
export async function addCounterparties(
  trx: Db,
  rows: Array<Insertable<Database['entity_counterparties']>>,
): Promise<void> {
  await trx
    .insertInto('entity_counterparties')
    .values(rows)
    .onConflict((oc) =>
      oc.columns(['environment', 'entity_id', 'counterparty_id']).doUpdateSet({
        trades: sql`entity_counterparties.trades + excluded.trades`,
      }),
    )
    .execute();
}

/** Deletes the entity's currency, bucket and counterparty rows, in that order. */
export async function deleteAggregatesOf(trx: Db, environment: Environment, id: string): Promise<void> {
  for (const table of ['entity_currency', 'entity_hourly', 'entity_counterparties'] as const) {
    await trx.deleteFrom(table).where('environment', '=', environment).where('entity_id', '=', id).execute();
  }
}

/** Other entities' counterparty rows naming `counterpartyId`. */
export function counterpartyRowsNaming(trx: Db, environment: Environment, counterpartyId: string) {
  return trx
    .selectFrom('entity_counterparties')
    .selectAll()
    .where('environment', '=', environment)
    .where('counterparty_id', '=', counterpartyId)
    .execute();
}

export async function deleteCounterpartyRowsNaming(
  trx: Db,
  environment: Environment,
  counterpartyId: string,
): Promise<void> {
  await trx
    .deleteFrom('entity_counterparties')
    .where('environment', '=', environment)
    .where('counterparty_id', '=', counterpartyId)
    .execute();
}

/** The entity's volume per currency, by currency. */
export function currencyVolumes(db: Db, environment: Environment, id: string) {
  return db
    .selectFrom('entity_currency')
    .select(['currency', 'volume'])
    .where('environment', '=', environment)
    .where('entity_id', '=', id)
    .orderBy('currency')
    .execute();
}
