// The aggregate rows an event batch reads and writes back (ingest.ts): entities, their per-currency
// amount statistics, ten-minute velocity buckets, counterparty pair counts and linked identifiers.
import { sql, type Transaction } from 'kysely';
import type { Database, EntitiesTable, EntityCurrencyTable } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';
import { chunks } from '../store/chunks.ts';
import { isFlagged, writeIdentifiers } from './linkage.ts';

/** Buckets older than this cannot affect a velocity signal (a day) and are pruned. */
export const BUCKETS_KEPT = 150;

type Entity = EntitiesTable;

export function blankEntity(environment: Environment, id: string): Entity {
  return {
    environment,
    entity_id: id,
    version: 0,
    first_seen_at: 0,
    last_event_at: 0,
    trades_completed: 0,
    trades_cancelled: 0,
    disputes_opened: 0,
    disputes_won: 0,
    disputes_lost: 0,
    chargebacks: 0,
    fraud_reports: 0,
    blocklisted: 0,
    blocklist_changed_at: 0,
    decay_at: 0,
    d_trades_completed: 0,
    d_trades_cancelled: 0,
    d_disputes_lost: 0,
    d_chargebacks: 0,
    d_fraud_reports: 0,
    last_trade_at: 0,
    flagged_at: 0,
    disputes_lost_third_party_payment: 0,
    disputes_lost_fake_proof: 0,
    disputes_lost_underpayment: 0,
    disputes_lost_no_payment: 0,
    d_disputes_lost_fraudulent: 0,
  };
}

/** A stored entities row as the batch changes it. */
export function entityFromRow(row: Entity): Entity {
  return {
    ...row,
    version: Number(row.version),
    fraud_reports: Number(row.fraud_reports),
    blocklisted: Number(row.blocklisted),
    // bigint columns come back as strings from PostgreSQL; += on them would concatenate
    disputes_lost_third_party_payment: Number(row.disputes_lost_third_party_payment),
    disputes_lost_fake_proof: Number(row.disputes_lost_fake_proof),
    disputes_lost_underpayment: Number(row.disputes_lost_underpayment),
    disputes_lost_no_payment: Number(row.disputes_lost_no_payment),
  };
}

export interface Pending {
  environment: Environment;
  entities: Map<string, Entity>;
  currencies: Map<string, EntityCurrencyTable>;
  buckets: Map<
    string,
    { environment: Environment; entity_id: string; bucket: number; currency: string; trades: number; volume: number }
  >;
  counterparties: Map<string, { environment: Environment; entity_id: string; counterparty_id: string; trades: number }>;
  identifiers: Map<
    string,
    { environment: Environment; id_type: string; hash: string; entity_id: string; created_at: number }
  >;
  /** whether each entity of the batch was flagged before it (identifier_stats moves with changes) */
  wasFlagged: Map<string, boolean>;
}

/**
 * Loads (creating placeholders for) the batch's entities. On PostgreSQL it first locks them, in
 * one global entity_id order, so two batches touching the same entities wait for one another
 * instead of deadlocking. Only the batch's own entities are locked: a flag change reaches the
 * entities sharing an identifier through identifier_stats, never by writing their rows.
 */
export async function loadState(
  trx: Transaction<Database>,
  environment: Environment,
  entityIds: string[],
  lock: boolean,
): Promise<Pick<Pending, 'entities' | 'currencies' | 'wasFlagged'>> {
  for (const ids of chunks(entityIds)) {
    const insert = trx.insertInto('entities').values(ids.map((id) => blankEntity(environment, id)));
    // An upsert locks new and existing rows alike, in the order of its VALUES list.
    if (lock)
      await insert
        .onConflict((oc) =>
          oc.columns(['environment', 'entity_id']).doUpdateSet((eb) => ({ version: eb.ref('entities.version') })),
        )
        .execute();
    else await insert.onConflict((oc) => oc.columns(['environment', 'entity_id']).doNothing()).execute();
  }
  const entities = new Map<string, Entity>();
  const currencies = new Map<string, EntityCurrencyTable>();
  const wasFlagged = new Map<string, boolean>();
  for (const ids of chunks(entityIds)) {
    // Placeholder rows are overwritten before commit.
    for (const row of await trx
      .selectFrom('entities')
      .selectAll()
      .where('environment', '=', environment)
      .where('entity_id', 'in', ids)
      .execute()) {
      const e = entityFromRow(row);
      entities.set(row.entity_id, e);
      wasFlagged.set(row.entity_id, isFlagged(e));
    }
    const cur = await trx
      .selectFrom('entity_currency')
      .selectAll()
      .where('environment', '=', environment)
      .where('entity_id', 'in', ids)
      .execute();
    for (const c of cur) currencies.set(`${c.entity_id}\u0000${c.currency}`, c);
  }
  return { entities, currencies, wasFlagged };
}

export async function writeState(trx: Transaction<Database>, p: Pending, nowBucket: number): Promise<void> {
  const entities = [...p.entities.values()].map((e) => ({ ...e, version: e.version + 1 }));
  for (const rows of chunks(entities, 100)) {
    await trx
      .insertInto('entities')
      .values(rows)
      .onConflict((oc) =>
        oc.columns(['environment', 'entity_id']).doUpdateSet((eb) => {
          const cols = Object.keys(rows[0]!).filter((k) => k !== 'entity_id' && k !== 'environment') as Array<
            keyof Entity
          >;
          return Object.fromEntries(cols.map((c) => [c, eb.ref(`excluded.${c}`)]));
        }),
      )
      .execute();
  }
  for (const rows of chunks([...p.currencies.values()])) {
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
  for (const rows of chunks([...p.buckets.values()])) {
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
  const touched = [...new Set([...p.buckets.values()].map((b) => b.entity_id))];
  for (const ids of chunks(touched)) {
    await trx
      .deleteFrom('entity_hourly')
      .where('environment', '=', p.environment)
      .where('entity_id', 'in', ids)
      .where('bucket', '<', nowBucket - BUCKETS_KEPT)
      .execute();
  }
  for (const rows of chunks([...p.counterparties.values()])) {
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
  await writeIdentifiers(trx, p.environment, p.entities, p.wasFlagged, p.identifiers.values());
}
