// Event ingestion. A batch is all or nothing: the raw events (idempotent by the client's event_id)
// and every aggregate they change, so a score never scans raw history and a 200 means all of it is
// stored. Aggregates are read once per batch, updated in memory in time order, and written back.
// The transaction touches only the batch's own entities and the identifiers they hold, so it stays
// short however widely an identifier is shared, and never holds the write lock for long.
import { labelFromEvents } from '../audit/labels.ts';
import type { Transaction } from 'kysely';
import type { Database, EntitiesTable } from '../store/schema.ts';
import type { Store } from '../store/db.ts';
import type { Policy } from '../model/policy.ts';
import type { TrustEvent } from './schemas.ts';
import type { Environment } from '../lib/principal.ts';
import { batchEventIds, insertEventRows } from './event-ids.ts';
import { announceFlags, flagFacts } from '../webhooks/events.ts';
import { GroupCommitQueue } from './ingest-queue.ts';
import { loadState, writeState, type Pending } from './aggregate-state.ts';

export interface IngestResult {
  accepted: number;
  duplicates: number;
}

const DAY_MS = 86_400_000;
export const BUCKET_MS = 600_000;

type Entity = EntitiesTable;
type Decayed =
  | 'd_trades_completed'
  | 'd_trades_cancelled'
  | 'd_disputes_lost'
  | 'd_chargebacks'
  | 'd_fraud_reports'
  | 'd_disputes_lost_fraudulent';
const DECAYED: Decayed[] = [
  'd_trades_completed',
  'd_trades_cancelled',
  'd_disputes_lost',
  'd_chargebacks',
  'd_fraud_reports',
  'd_disputes_lost_fraudulent',
];

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

/** Disputes involve both parties: an event naming the counterparty updates it too (mirrored). */
const MIRRORED: ReadonlySet<string> = new Set(['dispute.opened', 'dispute.resolved']);
export const mirroredParty = (ev: TrustEvent) =>
  MIRRORED.has(ev.type) && ev.counterparty_id !== undefined && ev.counterparty_id !== ev.entity_id
    ? ev.counterparty_id
    : undefined;

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

/** The loser's per-reason count for a fraud-naming reason (019_loss_reasons); other reasons count nowhere extra. */
const LOSS_COLUMN: Partial<Record<NonNullable<TrustEvent['reason']>, keyof Entity & `disputes_lost_${string}`>> = {
  third_party_payment: 'disputes_lost_third_party_payment',
  fake_proof: 'disputes_lost_fake_proof',
  underpayment: 'disputes_lost_underpayment',
  no_payment: 'disputes_lost_no_payment',
};

function resolveDispute(e: Entity, lost: boolean, reason: TrustEvent['reason'], t: number, halfLifeMs: number): void {
  if (lost) {
    e.disputes_lost += 1;
    const column = reason === undefined ? undefined : LOSS_COLUMN[reason];
    e.flagged_at = Math.max(Number(e.flagged_at), t);
    bumpDecayed(e, 'd_disputes_lost', t, halfLifeMs);
    if (column !== undefined) {
      e[column] = Number(e[column]) + 1;
      bumpDecayed(e, 'd_disputes_lost_fraudulent', t, halfLifeMs);
    }
  } else {
    e.disputes_won += 1;
  }
}

/** Applies one event at its time `t` to a batch's aggregates (also the offline quality bench's history). */
export function applyEvent(p: Pending, ev: TrustEvent, t: number, now: number, halfLifeMs: number): void {
  const e = seen(p, ev.entity_id, t);
  const other = mirroredParty(ev);
  const counterparty = other === undefined ? undefined : seen(p, other, t);
  for (const l of ev.linked_identifiers ?? []) {
    p.identifiers.set(`${l.type}\u0000${l.hash}\u0000${ev.entity_id}`, {
      environment: p.environment,
      id_type: l.type,
      hash: l.hash,
      entity_id: ev.entity_id,
      created_at: now,
    });
  }
  switch (ev.type) {
    case 'trade.completed': {
      e.trades_completed += 1;
      e.last_trade_at = Math.max(Number(e.last_trade_at), t);
      bumpDecayed(e, 'd_trades_completed', t, halfLifeMs);
      // A trade reported without its amount still counts as a trade (and towards velocity); only
      // the amount and volume statistics, which need the figure, leave it out.
      const amount =
        ev.amount !== undefined && ev.currency !== undefined && Number.isFinite(ev.amount) && ev.amount > 0
          ? ev.amount
          : undefined;
      const currency = amount === undefined ? '' : ev.currency!;
      if (amount !== undefined) {
        const key = `${ev.entity_id}\u0000${currency}`;
        const c = p.currencies.get(key) ?? {
          environment: p.environment,
          entity_id: ev.entity_id,
          currency,
          trades: 0,
          volume: 0,
          log_mean: 0,
          log_m2: 0,
        };
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
        const b = p.buckets.get(bkey) ?? {
          environment: p.environment,
          entity_id: ev.entity_id,
          bucket,
          currency,
          trades: 0,
          volume: 0,
        };
        b.trades += 1;
        b.volume += amount ?? 0;
        p.buckets.set(bkey, b);
      }
      if (ev.counterparty_id !== undefined) {
        const ckey = `${ev.entity_id}\u0000${ev.counterparty_id}`;
        const cp = p.counterparties.get(ckey) ?? {
          environment: p.environment,
          entity_id: ev.entity_id,
          counterparty_id: ev.counterparty_id,
          trades: 0,
        };
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
      // The reason is the loser's: whichever side lost was caught at it.
      resolveDispute(e, ev.resolution === 'against', ev.reason, t, halfLifeMs);
      if (counterparty) resolveDispute(counterparty, ev.resolution !== 'against', ev.reason, t, halfLifeMs);
      break;
    case 'chargeback':
      e.chargebacks += 1;
      e.flagged_at = Math.max(Number(e.flagged_at), t);
      bumpDecayed(e, 'd_chargebacks', t, halfLifeMs);
      break;
    case 'fraud.reported':
      e.fraud_reports += 1;
      e.flagged_at = Math.max(Number(e.flagged_at), t);
      bumpDecayed(e, 'd_fraud_reports', t, halfLifeMs);
      break;
    case 'entity.blocklisted':
    case 'entity.unblocklisted':
      // The latest change by occurred_at wins, whatever order the events arrive in.
      if (t >= e.blocklist_changed_at) {
        e.blocklisted = ev.type === 'entity.blocklisted' ? 1 : 0;
        e.blocklist_changed_at = t;
      }
      if (ev.type === 'entity.blocklisted') e.flagged_at = Math.max(Number(e.flagged_at), t);
      break;
    case 'identifier.linked':
      break;
  }
}

export { EventConflictError } from './event-ids.ts';

export interface IngestOptions {
  /** the partition every row read and written belongs to (docs/api.md, "Integration" test mode) */
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
 *
 * On SQLite, batches that arrive together share one transaction and one commit (ingest-queue.ts),
 * each in its own savepoint; on PostgreSQL each batch is its own transaction, run again when the
 * server reports a deadlock or serialization failure.
 */
export async function ingestEvents(
  store: Store,
  events: TrustEvent[],
  policy: Policy,
  options: IngestOptions,
): Promise<IngestResult> {
  const batch = prepareBatch(events, policy, options);
  if (store.dialect === 'sqlite') {
    const host = hostWriters.get(store);
    if (!host) return commitPrepared(store, batch);
    const result = await host(batch);
    if (result.accepted > 0) store.changes.localWrite();
    return result;
  }
  for (let attempt = 1; ; attempt += 1) {
    try {
      const result = await store.db.transaction().execute((trx) => ingestInTransaction(trx, batch, true));
      if (result.accepted > 0) store.changes.localWrite();
      return result;
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (attempt >= ATTEMPTS || typeof code !== 'string' || !RETRYABLE.has(code)) throw err;
      // A batch is all or nothing and idempotent, so running it again is safe.
      await new Promise((r) => setTimeout(r, Math.random() * 20 * attempt));
    }
  }
}

const queues = new WeakMap<Store, GroupCommitQueue<PreparedBatch, IngestResult>>();
/** A cluster worker's: its batches commit in the host's writer (trust/ingest-host.ts). */
const hostWriters = new WeakMap<Store, (batch: PreparedBatch) => Promise<IngestResult>>();

/** From now on this store's batches are committed by `commit` (the host's writer) instead of here. */
export function ingestThrough(store: Store, commit: (batch: PreparedBatch) => Promise<IngestResult>): void {
  hostWriters.set(store, commit);
}

/** Commits a prepared batch here, in this process's group commit (SQLite): the host writer's side. */
export function commitPrepared(store: Store, batch: PreparedBatch): Promise<IngestResult> {
  return ingestQueue(store).submit(batch);
}

/** The store's group-commit queue (SQLite): one per store, so every caller's batches share it. */
function ingestQueue(store: Store): { submit(batch: PreparedBatch): Promise<IngestResult> } {
  let queue = queues.get(store);
  if (!queue) {
    queue = new GroupCommitQueue<PreparedBatch, IngestResult>(
      store.db,
      (trx, batch) => ingestInTransaction(trx, batch, false),
      (results) => {
        // Cached scores in this process are checked against this before they are served.
        if (results.some((r) => r.accepted > 0)) store.changes.localWrite();
      },
      store.checkpointIfDue
        ? {
            between: async () => {
              await store.checkpointIfDue!();
            },
          }
        : {},
    );
    queues.set(store, queue);
  }
  const q = queue;
  return { submit: (batch) => q.submit(batch, batch.events.length) };
}

/** One batch, checked and ready to store: what ingestInTransaction needs. */
export interface PreparedBatch {
  events: TrustEvent[];
  payloads: string[];
  first: Map<string, number>;
  /** the policy's decay half-life */
  halfLifeMs: number;
  /** the policy's maxIdentifierFanout: entity.flagged never fans out through a hub */
  fanout: number;
  environment: Environment;
  clientId: string;
  now: number;
}

/** Throws EventConflictError when the batch uses one event_id for two different events. */
function prepareBatch(events: TrustEvent[], policy: Policy, options: IngestOptions): PreparedBatch {
  const { payloads, first } = batchEventIds(events);
  return {
    events,
    payloads,
    first,
    halfLifeMs: policy.decayHalfLifeDays * DAY_MS,
    fanout: policy.maxIdentifierFanout,
    environment: options.environment,
    clientId: options.clientId ?? '',
    now: options.now ?? Date.now(),
  };
}

/**
 * Stores one batch inside the caller's transaction. `lockEntities` (PostgreSQL) takes the batch's
 * entity rows in one global order first, so concurrent batches wait rather than deadlock.
 */
async function ingestInTransaction(
  trx: Transaction<Database>,
  batch: PreparedBatch,
  lockEntities: boolean,
): Promise<IngestResult> {
  const { events, payloads, first, halfLifeMs, fanout, environment, clientId, now } = batch;
  // Inserted in event_id order: concurrent batches sharing events lock them in the same order.
  const ordered = [...first.values()].sort((a, b) =>
    events[a]!.event_id < events[b]!.event_id ? -1 : events[a]!.event_id > events[b]!.event_id ? 1 : 0,
  );
  // Throws EventConflictError: the batch's other events roll back with it.
  const fresh = await insertEventRows(trx, environment, events, payloads, first, ordered, clientId, now);
  const accepted = [...first.values()]
    .filter((i) => fresh.has(events[i]!.event_id))
    .map((i) => ({ ev: events[i]!, t: Date.parse(events[i]!.occurred_at) }))
    .sort((a, b) => a.t - b.t);
  if (accepted.length > 0) {
    const entityIds = [
      ...new Set(accepted.flatMap((a) => [a.ev.entity_id, mirroredParty(a.ev) ?? a.ev.entity_id])),
    ].sort();
    const state = await loadState(trx, environment, entityIds, lockEntities);
    const pending: Pending = {
      environment,
      ...state,
      buckets: new Map(),
      counterparties: new Map(),
      identifiers: new Map(),
    };
    for (const { ev, t } of accepted) applyEvent(pending, ev, t, now, halfLifeMs);
    await writeState(trx, pending, Math.floor(now / BUCKET_MS));
    // Outcome events label the decisions of their trade (docs/api.md, "Outcomes and labels"), in this transaction.
    await labelFromEvents(
      trx,
      environment,
      accepted.map((a) => a.ev),
      clientId,
      now,
    );
    // entity.flagged webhooks: one fan-out row in this transaction, expanded by the webhook worker (src/webhooks/fanout.ts).
    await announceFlags(trx, environment, clientId, flagFacts(accepted.map((a) => a.ev)), fanout);
  }
  return { accepted: accepted.length, duplicates: events.length - accepted.length };
}
