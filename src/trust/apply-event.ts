// How one event changes an entity's aggregates, in memory: counters, time-decayed counters,
// per-currency amount statistics, velocity buckets and counterparty counts. Ingestion (ingest.ts)
// applies a batch's events in time order to the state it loaded; the offline quality bench replays
// a whole history through the same function.
import type { EntitiesTable } from '../store/schema.ts';
import type { TrustEvent } from './schemas.ts';
import type { Pending } from './aggregate-state.ts';

export const DAY_MS = 86_400_000;
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
