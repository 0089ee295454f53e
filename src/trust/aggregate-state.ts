// The aggregate rows an event batch reads and writes back (ingest.ts): entities, their per-currency
// amount statistics, ten-minute velocity buckets, counterparty pair counts and linked identifiers,
// through their owner's repositories (src/entities/).
import type { Transaction } from 'kysely';
import type { Database, EntitiesTable, EntityCurrencyTable } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';
import { chunks } from '../store/chunks.ts';
import { isFlagged, writeIdentifiers } from './linkage.ts';
import { entitiesIn, insertBlankEntities, upsertEntities } from '../entities/entity-repository.ts';
import {
  addCounterparties,
  addHourly,
  currenciesOf,
  pruneHourly,
  upsertCurrencies,
} from '../entities/aggregate-repository.ts';

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
  // An upsert (with lock) locks new and existing rows alike, in the order of its VALUES list.
  for (const ids of chunks(entityIds))
    await insertBlankEntities(
      trx,
      ids.map((id) => blankEntity(environment, id)),
      lock,
    );
  const entities = new Map<string, Entity>();
  const currencies = new Map<string, EntityCurrencyTable>();
  const wasFlagged = new Map<string, boolean>();
  for (const ids of chunks(entityIds)) {
    // Placeholder rows are overwritten before commit.
    for (const row of await entitiesIn(trx, environment, ids)) {
      const e = entityFromRow(row);
      entities.set(row.entity_id, e);
      wasFlagged.set(row.entity_id, isFlagged(e));
    }
    const cur = await currenciesOf(trx, environment, ids);
    for (const c of cur) currencies.set(`${c.entity_id}\u0000${c.currency}`, c);
  }
  return { entities, currencies, wasFlagged };
}

export async function writeState(trx: Transaction<Database>, p: Pending, nowBucket: number): Promise<void> {
  const entities = [...p.entities.values()].map((e) => ({ ...e, version: e.version + 1 }));
  for (const rows of chunks(entities, 100)) await upsertEntities(trx, rows);
  for (const rows of chunks([...p.currencies.values()])) await upsertCurrencies(trx, rows);
  for (const rows of chunks([...p.buckets.values()])) await addHourly(trx, rows);
  const touched = [...new Set([...p.buckets.values()].map((b) => b.entity_id))];
  for (const ids of chunks(touched)) await pruneHourly(trx, p.environment, ids, nowBucket - BUCKETS_KEPT);
  for (const rows of chunks([...p.counterparties.values()])) await addCounterparties(trx, rows);
  await writeIdentifiers(trx, p.environment, p.entities, p.wasFlagged, p.identifiers.values());
}
