// Event ingestion. A batch is one transaction: the raw events (idempotent by event_id) and every
// aggregate they change, so a score never scans raw history and a 200 means all of it is stored.
// Aggregates are read once per batch, updated in memory in time order, and written back.
import { sql, type Transaction } from 'kysely';
import type { Database, EntitiesTable, EntityCurrencyTable } from '../store/schema.ts';
import type { Store } from '../store/db.ts';
import type { Policy } from '../config/policy.ts';
import type { TrustEvent } from './schemas.ts';

export interface IngestResult {
  accepted: number;
  duplicates: number;
}

const DAY_MS = 86_400_000;
export const BUCKET_MS = 600_000;
/** Buckets older than this cannot affect a velocity signal (a day) and are pruned. */
const BUCKETS_KEPT = 150;
const CHUNK = 200;

type Entity = EntitiesTable;
type Decayed = 'd_trades_completed' | 'd_trades_cancelled' | 'd_disputes_lost' | 'd_chargebacks' | 'd_fraud_reports';
const DECAYED: Decayed[] = ['d_trades_completed', 'd_trades_cancelled', 'd_disputes_lost', 'd_chargebacks', 'd_fraud_reports'];

function chunks<T>(items: T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

function blankEntity(id: string): Entity {
  return {
    entity_id: id, version: 0, first_seen_at: 0, last_event_at: 0,
    trades_completed: 0, trades_cancelled: 0, disputes_opened: 0, disputes_won: 0, disputes_lost: 0,
    chargebacks: 0, fraud_reports: 0, blocklisted: 0, blocklist_changed_at: 0, decay_at: 0,
    d_trades_completed: 0, d_trades_cancelled: 0, d_disputes_lost: 0, d_chargebacks: 0, d_fraud_reports: 0,
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

export const isFlagged = (e: Pick<Entity, 'fraud_reports' | 'blocklisted'>) => e.fraud_reports > 0 || e.blocklisted === 1;

interface Pending {
  entities: Map<string, Entity>;
  currencies: Map<string, EntityCurrencyTable>;
  buckets: Map<string, { entity_id: string; bucket: number; currency: string; trades: number; volume: number }>;
  counterparties: Map<string, { entity_id: string; counterparty_id: string; trades: number }>;
  identifiers: Map<string, { id_type: string; hash: string; entity_id: string; created_at: number }>;
  /** entities whose flagged status or identifiers changed: their neighbours' scores are stale */
  neighboursStale: Set<string>;
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
    p.identifiers.set(`${l.type}\u0000${l.hash}\u0000${ev.entity_id}`, { id_type: l.type, hash: l.hash, entity_id: ev.entity_id, created_at: now });
    p.neighboursStale.add(ev.entity_id);
  }
  switch (ev.type) {
    case 'trade.completed': {
      e.trades_completed += 1;
      bumpDecayed(e, 'd_trades_completed', t, halfLifeMs);
      const currency = ev.currency!;
      const amount = ev.amount!;
      const key = `${ev.entity_id}\u0000${currency}`;
      const c = p.currencies.get(key) ?? { entity_id: ev.entity_id, currency, trades: 0, volume: 0, log_mean: 0, log_m2: 0 };
      // Welford's online mean and variance of ln(amount).
      const x = Math.log(amount);
      c.trades += 1;
      c.volume += amount;
      const delta = x - c.log_mean;
      c.log_mean += delta / c.trades;
      c.log_m2 += delta * (x - c.log_mean);
      p.currencies.set(key, c);
      if (t > now - DAY_MS - BUCKET_MS && t <= now + BUCKET_MS) {
        const bucket = Math.floor(t / BUCKET_MS);
        const bkey = `${ev.entity_id}\u0000${bucket}\u0000${currency}`;
        const b = p.buckets.get(bkey) ?? { entity_id: ev.entity_id, bucket, currency, trades: 0, volume: 0 };
        b.trades += 1;
        b.volume += amount;
        p.buckets.set(bkey, b);
      }
      if (ev.counterparty_id !== undefined) {
        const ckey = `${ev.entity_id}\u0000${ev.counterparty_id}`;
        const cp = p.counterparties.get(ckey) ?? { entity_id: ev.entity_id, counterparty_id: ev.counterparty_id, trades: 0 };
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
      p.neighboursStale.add(ev.entity_id);
      break;
    case 'entity.blocklisted':
    case 'entity.unblocklisted':
      // The latest change by occurred_at wins, whatever order the events arrive in.
      if (t >= e.blocklist_changed_at) {
        e.blocklisted = ev.type === 'entity.blocklisted' ? 1 : 0;
        e.blocklist_changed_at = t;
      }
      p.neighboursStale.add(ev.entity_id);
      break;
    case 'identifier.linked':
      break;
  }
}

const FLAG_EVENTS = new Set<string>(['fraud.reported', 'entity.blocklisted', 'entity.unblocklisted']);

/**
 * The entities outside the batch whose version writeState may bump (see `stale` there): every
 * holder of an identifier that a flagged (or flag-changing) entity of the batch holds or links
 * now. Read before any lock is taken; should a concurrent batch change the graph meanwhile, an
 * unlocked neighbour can still deadlock, and ingestEvents runs the batch again.
 */
async function neighbourCandidates(trx: Transaction<Database>, events: TrustEvent[]): Promise<string[]> {
  const flagging = new Set(events.filter((ev) => FLAG_EVENTS.has(ev.type)).map((ev) => ev.entity_id));
  const linking = [...new Set(events.filter((ev) => (ev.linked_identifiers?.length ?? 0) > 0).map((ev) => ev.entity_id))].filter((id) => !flagging.has(id));
  const sources = new Set(flagging);
  for (const ids of chunks(linking)) {
    const rows = await trx.selectFrom('entities').select('entity_id').where('entity_id', 'in', ids)
      .where((eb) => eb.or([eb('fraud_reports', '>', 0), eb('blocklisted', '=', 1), eb('blocklist_changed_at', '>', 0)]))
      .execute();
    for (const r of rows) sources.add(r.entity_id);
  }
  if (sources.size === 0) return [];
  const found = new Set<string>();
  for (const ids of chunks([...sources])) {
    const rows = await trx.selectFrom('identifiers as m')
      .innerJoin('identifiers as o', (j) => j.onRef('o.id_type', '=', 'm.id_type').onRef('o.hash', '=', 'm.hash'))
      .select('o.entity_id').distinct().where('m.entity_id', 'in', ids).execute();
    for (const r of rows) found.add(r.entity_id);
  }
  const linked = new Map<string, { type: string; hash: string }>();
  for (const ev of events) {
    if (sources.has(ev.entity_id)) for (const l of ev.linked_identifiers ?? []) linked.set(`${l.type}\u0000${l.hash}`, l);
  }
  for (const pairs of chunks([...linked.values()], 100)) {
    const rows = await trx.selectFrom('identifiers').select('entity_id').distinct()
      .where((eb) => eb.or(pairs.map((l) => eb.and([eb('id_type', '=', l.type), eb('hash', '=', l.hash)]))))
      .execute();
    for (const r of rows) found.add(r.entity_id);
  }
  return [...found];
}

/**
 * Loads (creating placeholders for) the batch's entities. On PostgreSQL it first locks them and
 * every neighbour writeState may bump, all in one global entity_id order, so two batches that
 * touch each other's neighbours wait for one another instead of deadlocking.
 */
async function loadState(trx: Transaction<Database>, entityIds: string[], neighbours: string[], lock: boolean): Promise<Pick<Pending, 'entities' | 'currencies'>> {
  if (lock) {
    const all = [...new Set([...entityIds, ...neighbours])].sort();
    for (const ids of chunks(all)) {
      // An upsert locks new and existing rows alike, in the order of its VALUES list.
      await trx.insertInto('entities').values(ids.map(blankEntity))
        .onConflict((oc) => oc.column('entity_id').doUpdateSet((eb) => ({ version: eb.ref('entities.version') })))
        .execute();
    }
  } else {
    for (const ids of chunks(entityIds)) {
      await trx.insertInto('entities').values(ids.map(blankEntity)).onConflict((oc) => oc.column('entity_id').doNothing()).execute();
    }
  }
  const entities = new Map<string, Entity>();
  const currencies = new Map<string, EntityCurrencyTable>();
  for (const ids of chunks(entityIds)) {
    // Placeholder rows are overwritten before commit.
    for (const row of await trx.selectFrom('entities').selectAll().where('entity_id', 'in', ids).execute()) entities.set(row.entity_id, row);
    const cur = await trx.selectFrom('entity_currency').selectAll().where('entity_id', 'in', ids).execute();
    for (const c of cur) currencies.set(`${c.entity_id}\u0000${c.currency}`, c);
  }
  return { entities, currencies };
}

async function writeState(trx: Transaction<Database>, p: Pending, nowBucket: number): Promise<void> {
  const entities = [...p.entities.values()].map((e) => ({ ...e, version: e.version + 1 }));
  for (const rows of chunks(entities, 100)) {
    await trx.insertInto('entities').values(rows).onConflict((oc) => oc.column('entity_id').doUpdateSet((eb) => {
      const cols = Object.keys(rows[0]!).filter((k) => k !== 'entity_id') as Array<keyof Entity>;
      return Object.fromEntries(cols.map((c) => [c, eb.ref(`excluded.${c}`)]));
    })).execute();
  }
  for (const rows of chunks([...p.currencies.values()])) {
    await trx.insertInto('entity_currency').values(rows).onConflict((oc) => oc.columns(['entity_id', 'currency']).doUpdateSet((eb) => ({
      trades: eb.ref('excluded.trades'), volume: eb.ref('excluded.volume'), log_mean: eb.ref('excluded.log_mean'), log_m2: eb.ref('excluded.log_m2'),
    }))).execute();
  }
  for (const rows of chunks([...p.buckets.values()])) {
    await trx.insertInto('entity_hourly').values(rows).onConflict((oc) => oc.columns(['entity_id', 'bucket', 'currency']).doUpdateSet({
      trades: sql`entity_hourly.trades + excluded.trades`, volume: sql`entity_hourly.volume + excluded.volume`,
    })).execute();
  }
  const touched = [...new Set([...p.buckets.values()].map((b) => b.entity_id))];
  for (const ids of chunks(touched)) {
    await trx.deleteFrom('entity_hourly').where('entity_id', 'in', ids).where('bucket', '<', nowBucket - BUCKETS_KEPT).execute();
  }
  for (const rows of chunks([...p.counterparties.values()])) {
    await trx.insertInto('entity_counterparties').values(rows).onConflict((oc) => oc.columns(['entity_id', 'counterparty_id']).doUpdateSet({
      trades: sql`entity_counterparties.trades + excluded.trades`,
    })).execute();
  }
  for (const rows of chunks([...p.identifiers.values()])) {
    await trx.insertInto('identifiers').values(rows).onConflict((oc) => oc.columns(['id_type', 'hash', 'entity_id']).doNothing()).execute();
  }
  // Entities sharing an identifier with one whose flags or links changed score differently now:
  // a new version makes their cached scores stale on every instance.
  const stale = [...p.neighboursStale].filter((id) => isFlagged(p.entities.get(id)!) || p.entities.get(id)!.blocklist_changed_at > 0);
  for (const ids of chunks(stale)) {
    const neighbours = trx.selectFrom('identifiers as m')
      .innerJoin('identifiers as o', (j) => j.onRef('o.id_type', '=', 'm.id_type').onRef('o.hash', '=', 'm.hash'))
      .select('o.entity_id').where('m.entity_id', 'in', ids);
    await trx.updateTable('entities').set({ version: sql`version + 1` }).where('entity_id', 'in', neighbours).where('entity_id', 'not in', ids).execute();
  }
}

/** PostgreSQL deadlock and serialization failure: the transaction was rolled back and may be re-run. */
const RETRYABLE = new Set(['40P01', '40001']);
const ATTEMPTS = 5;

export async function ingestEvents(store: Store, events: TrustEvent[], policy: Policy, now = Date.now()): Promise<IngestResult> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await ingestOnce(store, events, policy, now);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (attempt >= ATTEMPTS || typeof code !== 'string' || !RETRYABLE.has(code)) throw err;
      // A batch is all or nothing and idempotent, so running it again is safe.
      await new Promise((r) => setTimeout(r, Math.random() * 20 * attempt));
    }
  }
}

async function ingestOnce(store: Store, events: TrustEvent[], policy: Policy, now: number): Promise<IngestResult> {
  const unique = new Map<string, TrustEvent>();
  for (const ev of events) if (!unique.has(ev.event_id)) unique.set(ev.event_id, ev);
  // Inserted in event_id order: concurrent batches sharing events lock them in the same order.
  const ordered = [...unique.values()].sort((a, b) => (a.event_id < b.event_id ? -1 : a.event_id > b.event_id ? 1 : 0));
  const halfLifeMs = policy.decayHalfLifeDays * DAY_MS;
  const result = await store.db.transaction().execute(async (trx) => {
    const fresh = new Set<string>();
    for (const batch of chunks(ordered)) {
      const inserted = await trx.insertInto('events').values(batch.map((ev) => ({
        event_id: ev.event_id, entity_id: ev.entity_id, type: ev.type, occurred_at: Date.parse(ev.occurred_at),
        payload: JSON.stringify(ev), ingested_at: now,
      }))).onConflict((oc) => oc.column('event_id').doNothing()).returning('event_id').execute();
      for (const r of inserted) fresh.add(r.event_id);
    }
    const accepted = [...unique.values()].filter((ev) => fresh.has(ev.event_id))
      .map((ev) => ({ ev, t: Date.parse(ev.occurred_at) }))
      .sort((a, b) => a.t - b.t);
    if (accepted.length > 0) {
      const entityIds = [...new Set(accepted.flatMap((a) => [a.ev.entity_id, mirroredParty(a.ev) ?? a.ev.entity_id]))].sort();
      const lock = store.dialect === 'postgres';
      const neighbours = lock ? await neighbourCandidates(trx, accepted.map((a) => a.ev)) : [];
      const state = await loadState(trx, entityIds, neighbours, lock);
      const pending: Pending = { ...state, buckets: new Map(), counterparties: new Map(), identifiers: new Map(), neighboursStale: new Set() };
      for (const { ev, t } of accepted) apply(pending, ev, t, now, halfLifeMs);
      await writeState(trx, pending, Math.floor(now / BUCKET_MS));
    }
    return { accepted: accepted.length, duplicates: events.length - accepted.length };
  });
  // Cached scores in this process are checked against this before they are served.
  if (result.accepted > 0) store.changes.localWrite();
  return result;
}
