// Event ingestion. A batch is one transaction: the raw events (idempotent by the client's event_id)
// and every aggregate they change, so a score never scans raw history and a 200 means all of it is
// stored. Aggregates are read once per batch, updated in memory in time order, and written back.
// The transaction touches only the batch's own entities and the identifiers they hold, so it stays
// short however widely an identifier is shared, and never holds the write lock for long.
import { labelFromEvents } from '../audit/labels.ts';
import { sql, type Transaction } from 'kysely';
import type { Database, EntitiesTable, EntityCurrencyTable } from '../store/schema.ts';
import type { Store } from '../store/db.ts';
import type { Policy } from '../config/policy.ts';
import type { TrustEvent } from './schemas.ts';
import type { Environment } from '../auth/principal.ts';
import { batchEventIds, insertEventRows } from './event-ids.ts';
import { chunks } from '../store/chunks.ts';
import { isFlagged, writeIdentifiers } from './linkage.ts';
import { announceFlags, flagFacts } from '../webhooks/events.ts';

export interface IngestResult {
  accepted: number;
  duplicates: number;
}

const DAY_MS = 86_400_000;
export const BUCKET_MS = 600_000;
/** Buckets older than this cannot affect a velocity signal (a day) and are pruned. */
const BUCKETS_KEPT = 150;

type Entity = EntitiesTable;
type Decayed = 'd_trades_completed' | 'd_trades_cancelled' | 'd_disputes_lost' | 'd_chargebacks' | 'd_fraud_reports';
const DECAYED: Decayed[] = ['d_trades_completed', 'd_trades_cancelled', 'd_disputes_lost', 'd_chargebacks', 'd_fraud_reports'];

function blankEntity(environment: Environment, id: string): Entity {
  return {
    environment, entity_id: id, version: 0, first_seen_at: 0, last_event_at: 0,
    trades_completed: 0, trades_cancelled: 0, disputes_opened: 0, disputes_won: 0, disputes_lost: 0,
    chargebacks: 0, fraud_reports: 0, blocklisted: 0, blocklist_changed_at: 0, decay_at: 0,
    d_trades_completed: 0, d_trades_cancelled: 0, d_disputes_lost: 0, d_chargebacks: 0, d_fraud_reports: 0,
    last_trade_at: 0,
  };
}

/** Adds one occurrence at time t to a decayed counter, keeping every counter relative to decay_at. */
function bumpDecayed(e: Entity, field: Decayed, t: number, halfLifeMs: number): void {
  if (t >= e.decay_at) {
    const k = Math.pow(2, -(t - e.decay_at) / halfLifeMs);
    for (const f of DECAYED) e[f] *= k;
    e.decay_at = t;
    e[field] += 1;
  } else {
    e[field] += Math.pow(2, -(e.decay_at - t) / halfLifeMs);
  }
}


interface Pending {
  environment: Environment;
  entities: Map<string, Entity>;
  currencies: Map<string, EntityCurrencyTable>;
  buckets: Map<string, { environment: Environment; entity_id: string; bucket: number; currency: string; trades: number; volume: number }>;
  counterparties: Map<string, { environment: Environment; entity_id: string; counterparty_id: string; trades: number }>;
  identifiers: Map<string, { environment: Environment; id_type: string; hash: string; entity_id: string; created_at: number }>;
  /** whether each entity of the batch was flagged before it (identifier_stats moves with changes) */
  wasFlagged: Map<string, boolean>;
}

/** Disputes involve both parties: an event naming the counterparty updates it too (mirrored). */
const MIRRORED: ReadonlySet<string> = new Set(['dispute.opened', 'dispute.resolved']);
export const mirroredParty = (ev: TrustEvent) => (MIRRORED.has(ev.type) && ev.counterparty_id !== undefined && ev.counterparty_id !== ev.entity_id ? ev.counterparty_id : undefined);

function seen(p: Pending, id: string, t: number): Entity {
  const e = p.entities.get(id)!;
  if (e.version === 0 && e.first_seen_at === 0) {
    e.first_seen_at = t;
    e.decay_at = t;
  }
  e.first_seen_at = Math.min(e.first_seen_at, t);
  e.last_event_at = Math.max(e.last_event_at, t);
  return e;
}

function resolveDispute(e: Entity, lost: boolean, t: number, halfLifeMs: number): void {
  if (lost) {
    e.disputes_lost += 1;
    bumpDecayed(e, 'd_disputes_lost', t, halfLifeMs);
  } else {
    e.disputes_won += 1;
  }
}

function apply(p: Pending, ev: TrustEvent, t: number, now: number, halfLifeMs: number): void {
  const e = seen(p, ev.entity_id, t);
  const other = mirroredParty(ev);
  const counterparty = other === undefined ? undefined : seen(p, other, t);
  for (const l of ev.linked_identifiers ?? []) {
    p.identifiers.set(`${l.type}\u0000${l.hash}\u0000${ev.entity_id}`, { environment: p.environment, id_type: l.type, hash: l.hash, entity_id: ev.entity_id, created_at: now });
  }
  switch (ev.type) {
    case 'trade.completed': {
      e.trades_completed += 1;
      e.last_trade_at = Math.max(Number(e.last_trade_at), t);
      bumpDecayed(e, 'd_trades_completed', t, halfLifeMs);
      // A trade reported without its amount still counts as a trade (and towards velocity); only
      // the amount and volume statistics, which need the figure, leave it out.
      const amount = ev.amount !== undefined && ev.currency !== undefined && Number.isFinite(ev.amount) && ev.amount > 0 ? ev.amount : undefined;
      const currency = amount === undefined ? '' : ev.currency!;
      if (amount !== undefined) {
        const key = `${ev.entity_id}\u0000${currency}`;
        const c = p.currencies.get(key) ?? { environment: p.environment, entity_id: ev.entity_id, currency, trades: 0, volume: 0, log_mean: 0, log_m2: 0 };
        // Welford's online mean and variance of ln(amount).
        const x = Math.log(amount);
        c.trades += 1;
        c.volume += amount;
        const delta = x - c.log_mean;
        c.log_mean += delta / c.trades;
        c.log_m2 += delta * (x - c.log_mean);
        p.currencies.set(key, c);
      }
      if (t > now - DAY_MS - BUCKET_MS && t <= now + BUCKET_MS) {
        // Amount-less trades share the '' currency bucket: counted as trades, never as volume.
        const bucket = Math.floor(t / BUCKET_MS);
        const bkey = `${ev.entity_id}\u0000${bucket}\u0000${currency}`;
        const b = p.buckets.get(bkey) ?? { environment: p.environment, entity_id: ev.entity_id, bucket, currency, trades: 0, volume: 0 };
        b.trades += 1;
        b.volume += amount ?? 0;
        p.buckets.set(bkey, b);
      }
      if (ev.counterparty_id !== undefined) {
        const ckey = `${ev.entity_id}\u0000${ev.counterparty_id}`;
        const cp = p.counterparties.get(ckey) ?? { environment: p.environment, entity_id: ev.entity_id, counterparty_id: ev.counterparty_id, trades: 0 };
        cp.trades += 1;
        p.counterparties.set(ckey, cp);
      }
      break;
    }
    case 'trade.cancelled':
      e.trades_cancelled += 1;
      bumpDecayed(e, 'd_trades_cancelled', t, halfLifeMs);
      break;
    case 'dispute.opened':
      e.disputes_opened += 1;
      if (counterparty) counterparty.disputes_opened += 1;
      break;
    case 'dispute.resolved':
      resolveDispute(e, ev.resolution === 'against', t, halfLifeMs);
      if (counterparty) resolveDispute(counterparty, ev.resolution !== 'against', t, halfLifeMs);
      break;
    case 'chargeback':
      e.chargebacks += 1;
      bumpDecayed(e, 'd_chargebacks', t, halfLifeMs);
      break;
    case 'fraud.reported':
      e.fraud_reports += 1;
      bumpDecayed(e, 'd_fraud_reports', t, halfLifeMs);
      break;
    case 'entity.blocklisted':
    case 'entity.unblocklisted':
      // The latest change by occurred_at wins, whatever order the events arrive in.
      if (t >= e.blocklist_changed_at) {
        e.blocklisted = ev.type === 'entity.blocklisted' ? 1 : 0;
        e.blocklist_changed_at = t;
      }
      break;
    case 'identifier.linked':
      break;
  }
}

/**
 * Loads (creating placeholders for) the batch's entities. On PostgreSQL it first locks them, in
 * one global entity_id order, so two batches touching the same entities wait for one another
 * instead of deadlocking. Only the batch's own entities are locked: a flag change reaches the
 * entities sharing an identifier through identifier_stats, never by writing their rows.
 */
async function loadState(trx: Transaction<Database>, environment: Environment, entityIds: string[], lock: boolean): Promise<Pick<Pending, 'entities' | 'currencies' | 'wasFlagged'>> {
  for (const ids of chunks(entityIds)) {
    const insert = trx.insertInto('entities').values(ids.map((id) => blankEntity(environment, id)));
    // An upsert locks new and existing rows alike, in the order of its VALUES list.
    if (lock) await insert.onConflict((oc) => oc.columns(['environment', 'entity_id']).doUpdateSet((eb) => ({ version: eb.ref('entities.version') }))).execute();
    else await insert.onConflict((oc) => oc.columns(['environment', 'entity_id']).doNothing()).execute();
  }
  const entities = new Map<string, Entity>();
  const currencies = new Map<string, EntityCurrencyTable>();
  const wasFlagged = new Map<string, boolean>();
  for (const ids of chunks(entityIds)) {
    // Placeholder rows are overwritten before commit.
    for (const row of await trx.selectFrom('entities').selectAll().where('environment', '=', environment).where('entity_id', 'in', ids).execute()) {
      const e = { ...row, version: Number(row.version), fraud_reports: Number(row.fraud_reports), blocklisted: Number(row.blocklisted) };
      entities.set(row.entity_id, e);
      wasFlagged.set(row.entity_id, isFlagged(e));
    }
    const cur = await trx.selectFrom('entity_currency').selectAll().where('environment', '=', environment).where('entity_id', 'in', ids).execute();
    for (const c of cur) currencies.set(`${c.entity_id}\u0000${c.currency}`, c);
  }
  return { entities, currencies, wasFlagged };
}

async function writeState(trx: Transaction<Database>, p: Pending, nowBucket: number): Promise<void> {
  const entities = [...p.entities.values()].map((e) => ({ ...e, version: e.version + 1 }));
  for (const rows of chunks(entities, 100)) {
    await trx.insertInto('entities').values(rows).onConflict((oc) => oc.columns(['environment', 'entity_id']).doUpdateSet((eb) => {
      const cols = Object.keys(rows[0]!).filter((k) => k !== 'entity_id' && k !== 'environment') as Array<keyof Entity>;
      return Object.fromEntries(cols.map((c) => [c, eb.ref(`excluded.${c}`)]));
    })).execute();
  }
  for (const rows of chunks([...p.currencies.values()])) {
    await trx.insertInto('entity_currency').values(rows).onConflict((oc) => oc.columns(['environment', 'entity_id', 'currency']).doUpdateSet((eb) => ({
      trades: eb.ref('excluded.trades'), volume: eb.ref('excluded.volume'), log_mean: eb.ref('excluded.log_mean'), log_m2: eb.ref('excluded.log_m2'),
    }))).execute();
  }
  for (const rows of chunks([...p.buckets.values()])) {
    await trx.insertInto('entity_hourly').values(rows).onConflict((oc) => oc.columns(['environment', 'entity_id', 'bucket', 'currency']).doUpdateSet({
      trades: sql`entity_hourly.trades + excluded.trades`, volume: sql`entity_hourly.volume + excluded.volume`,
    })).execute();
  }
  const touched = [...new Set([...p.buckets.values()].map((b) => b.entity_id))];
  for (const ids of chunks(touched)) {
    await trx.deleteFrom('entity_hourly').where('environment', '=', p.environment).where('entity_id', 'in', ids).where('bucket', '<', nowBucket - BUCKETS_KEPT).execute();
  }
  for (const rows of chunks([...p.counterparties.values()])) {
    await trx.insertInto('entity_counterparties').values(rows).onConflict((oc) => oc.columns(['environment', 'entity_id', 'counterparty_id']).doUpdateSet({
      trades: sql`entity_counterparties.trades + excluded.trades`,
    })).execute();
  }
  await writeIdentifiers(trx, p.environment, p.entities, p.wasFlagged, p.identifiers.values());
}

export { EventConflictError } from './event-ids.ts';

export interface IngestOptions {
  /** the partition every row read and written belongs to (CONTRACT §10 test mode) */
  environment: Environment;
  /** the client whose event ids these are; '' for events without a known owner (CLI import) */
  clientId?: string;
  now?: number;
}

/** PostgreSQL deadlock and serialization failure: the transaction was rolled back and may be re-run. */
const RETRYABLE = new Set(['40P01', '40001']);
const ATTEMPTS = 5;

/**
 * Stores a batch, all or nothing. Event ids are the client's own: the same id with the same
 * payload (compared canonically, so key order does not matter) is a duplicate; with a different
 * one the whole batch fails with EventConflictError and nothing is stored.
 */
export async function ingestEvents(store: Store, events: TrustEvent[], policy: Policy, options: IngestOptions): Promise<IngestResult> {
  const clientId = options.clientId ?? '';
  const now = options.now ?? Date.now();
  const { payloads, first } = batchEventIds(events);
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await ingestOnce(store, events, payloads, first, policy, options.environment, clientId, now);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (attempt >= ATTEMPTS || typeof code !== 'string' || !RETRYABLE.has(code)) throw err;
      // A batch is all or nothing and idempotent, so running it again is safe.
      await new Promise((r) => setTimeout(r, Math.random() * 20 * attempt));
    }
  }
}

async function ingestOnce(
  store: Store, events: TrustEvent[], payloads: string[], first: Map<string, number>, policy: Policy, environment: Environment, clientId: string, now: number,
): Promise<IngestResult> {
  // Inserted in event_id order: concurrent batches sharing events lock them in the same order.
  const ordered = [...first.values()].sort((a, b) => (events[a]!.event_id < events[b]!.event_id ? -1 : events[a]!.event_id > events[b]!.event_id ? 1 : 0));
  const halfLifeMs = policy.decayHalfLifeDays * DAY_MS;
  const result = await store.db.transaction().execute(async (trx) => {
    // Throws EventConflictError inside the transaction: the batch's other events roll back with it.
    const fresh = await insertEventRows(trx, environment, events, payloads, first, ordered, clientId, now);
    const accepted = [...first.values()].filter((i) => fresh.has(events[i]!.event_id))
      .map((i) => ({ ev: events[i]!, t: Date.parse(events[i]!.occurred_at) }))
      .sort((a, b) => a.t - b.t);
    if (accepted.length > 0) {
      const entityIds = [...new Set(accepted.flatMap((a) => [a.ev.entity_id, mirroredParty(a.ev) ?? a.ev.entity_id]))].sort();
      const state = await loadState(trx, environment, entityIds, store.dialect === 'postgres');
      const pending: Pending = { environment, ...state, buckets: new Map(), counterparties: new Map(), identifiers: new Map() };
      for (const { ev, t } of accepted) apply(pending, ev, t, now, halfLifeMs);
      await writeState(trx, pending, Math.floor(now / BUCKET_MS));
      // Outcome events label the decisions of their trade (CONTRACT §8), in this transaction.
      await labelFromEvents(trx, environment, accepted.map((a) => a.ev), clientId, now);
      // entity.flagged webhooks, in this transaction (src/webhooks/events.ts).
      await announceFlags(trx, environment, clientId, flagFacts(accepted.map((a) => a.ev)));
    }
    return { accepted: accepted.length, duplicates: events.length - accepted.length };
  });
  // Cached scores in this process are checked against this before they are served.
  if (result.accepted > 0) store.changes.localWrite();
  return result;
}
