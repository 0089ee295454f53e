// An in-memory stand-in for the event store, so the quality loop (simulate → score → label → fit →
// report) can run in a second without a database or HTTP. Events change the aggregates through
// ingestion's own applyEvent (src/trust/ingest.ts), one event per batch, ingested at its own time;
// this file only keeps the rows a batch writes (what aggregate-state.ts's writeState stores) and
// reads them back as src/trust/profile.ts's query does. It is a model of the store for benchmarks,
// not a second implementation to serve from: the HTTP quality run is the reference.
import { DEFAULT_POLICY, type Policy, type SignalName } from '../../src/model/policy.ts';
import { featureValues } from '../../src/model/feature-vector.ts';
import { scoreEntity } from '../../src/model/signal-model.ts';
import { applyEvent, BUCKET_MS, mirroredParty } from '../../src/trust/apply-event.ts';
import { blankEntity, type Pending } from '../../src/trust/aggregate-state.ts';
import { isFlagged } from '../../src/trust/linkage.ts';
import type { TrustEvent } from '../../src/trust/schemas.ts';
import type { EntityProfile, LinkedIdentifier, RiskLevel, ScoreRequest } from '../../src/model/types.ts';
import type { LabelledRequest } from './world.ts';
import { MemoryGraph } from '../../src/rings/memory.ts';
import { walkRing } from '../../src/rings/graph.ts';
import { SCORE_CAPS } from '../../src/rings/read.ts';

const DAY = 86_400_000;
/** Ten-minute buckets older than this are pruned, as writeState prunes entity_hourly. */
const BUCKETS_KEPT = 150;

/** One entity_hourly bucket: trades in every currency, volume per currency. */
interface Bucket {
  trades: number;
  volume: Map<string, number>;
}

export class OfflineHistory {
  /** entities and entity_currency, changed in place by applyEvent; the per-batch rows start empty */
  private readonly state: Pending = {
    environment: 'live',
    entities: new Map(),
    currencies: new Map(),
    buckets: new Map(),
    counterparties: new Map(),
    identifiers: new Map(),
    wasFlagged: new Map(),
  };
  /** entity_hourly: entity → bucket → trades and volume */
  private readonly buckets = new Map<string, Map<number, Bucket>>();
  /** entity_counterparties: "entity\0counterparty" → trades */
  private readonly counterparties = new Map<string, number>();
  /** identifiers: entity → its "type\0hash" keys, and each key's holders */
  private readonly identifiers = new Map<string, Set<string>>();
  private readonly holders = new Map<string, Set<string>>();
  private readonly halfLifeMs: number;
  /** the same links, read through the ring plan as the store's rows are (src/rings/read.ts) */
  private readonly graph = new MemoryGraph((id) => {
    const e = this.state.entities.get(id);
    return (
      e && {
        entityId: id,
        fraudReports: e.fraud_reports,
        blocklisted: e.blocklisted === 1,
        chargebacks: e.chargebacks,
        disputesLost: e.disputes_lost,
        flaggedAt: e.flagged_at,
      }
    );
  });
  private readonly fanout: number;

  constructor(policy: Policy = DEFAULT_POLICY) {
    this.halfLifeMs = policy.decayHalfLifeDays * DAY;
    this.fanout = policy.maxIdentifierFanout;
  }

  /** Ingests one event (in time order), as a batch of one received when it happened. */
  apply(ev: TrustEvent): void {
    const t = Date.parse(ev.occurred_at);
    const touched = [ev.entity_id, mirroredParty(ev)].filter((id) => id !== undefined);
    for (const id of touched) if (!this.state.entities.has(id)) this.state.entities.set(id, blankEntity('live', id));
    applyEvent(this.state, ev, t, t, this.halfLifeMs);
    for (const id of touched) this.state.entities.get(id)!.version += 1;
    this.write(Math.floor(t / BUCKET_MS));
  }

  /** What writeState does with the batch's new rows: adds them up, then prunes old buckets. */
  private write(nowBucket: number): void {
    for (const row of this.state.buckets.values()) {
      let own = this.buckets.get(row.entity_id);
      if (!own) this.buckets.set(row.entity_id, (own = new Map()));
      const bucket = own.get(row.bucket) ?? { trades: 0, volume: new Map<string, number>() };
      bucket.trades += row.trades;
      bucket.volume.set(row.currency, (bucket.volume.get(row.currency) ?? 0) + row.volume);
      own.set(row.bucket, bucket);
      // Events come in time order, so buckets are kept oldest first.
      for (const b of own.keys()) {
        if (b >= nowBucket - BUCKETS_KEPT) break;
        own.delete(b);
      }
    }
    for (const row of this.state.counterparties.values()) {
      const key = `${row.entity_id}\0${row.counterparty_id}`;
      this.counterparties.set(key, (this.counterparties.get(key) ?? 0) + row.trades);
    }
    for (const row of this.state.identifiers.values()) {
      const key = `${row.id_type}\0${row.hash}`;
      let own = this.identifiers.get(row.entity_id);
      if (!own) this.identifiers.set(row.entity_id, (own = new Set()));
      own.add(key);
      let holders = this.holders.get(key);
      if (!holders) this.holders.set(key, (holders = new Set()));
      holders.add(row.entity_id);
      this.graph.link(row.entity_id, row.id_type, row.hash);
    }
    this.state.buckets.clear();
    this.state.counterparties.clear();
    this.state.identifiers.clear();
  }

  /** The profile loadProfile would return at `now` for this request. */
  profile(request: ScoreRequest, now: number): EntityProfile {
    const id = request.entity_id;
    const e = this.state.entities.get(id);
    const known = e !== undefined && e.version > 0;
    const linked: LinkedIdentifier[] = request.context.linked_identifiers ?? [];
    const keys = new Set([...(this.identifiers.get(id) ?? []), ...linked.map((l) => `${l.type}\0${l.hash}`)]);
    // Counted per shared identifier, as identifier_stats sums them (profile.ts).
    let flaggedNeighbours = 0;
    let sharedWith = 0;
    for (const k of keys) {
      for (const other of this.holders.get(k) ?? []) {
        if (other === id) continue;
        sharedWith++;
        const neighbour = this.state.entities.get(other);
        if (neighbour && isFlagged(neighbour)) flaggedNeighbours++;
      }
    }
    const bucket = Math.floor(now / BUCKET_MS);
    const velocity = { tradesLastHour: 0, tradesLastDay: 0, volumeLastDay: 0 };
    for (const [b, v] of this.buckets.get(id) ?? []) {
      if (b < bucket - 143) continue;
      velocity.tradesLastDay += v.trades;
      velocity.volumeLastDay += v.volume.get(request.currency) ?? 0;
      if (b >= bucket - 5) velocity.tradesLastHour += v.trades;
    }
    const seeds = linked.map((l) => ({ idType: l.type, hash: l.hash }));
    const caps = { ...SCORE_CAPS, fanout: this.fanout };
    const ring =
      sharedWith > 0 && this.graph.shares(id, seeds)
        ? walkRing(this.graph.neighbourhood(id, seeds, caps), caps.depth, caps.fanout)
        : null;
    const c = this.state.currencies.get(`${id}\u0000${request.currency}`);
    const cp = request.context.counterparty_id;
    return {
      entityId: id,
      known,
      firstSeenAt: known ? e.first_seen_at : null,
      lastEventAt: known ? e.last_event_at : null,
      tradesCompleted: e?.trades_completed ?? 0,
      tradesCancelled: e?.trades_cancelled ?? 0,
      disputesOpened: e?.disputes_opened ?? 0,
      disputesWon: e?.disputes_won ?? 0,
      disputesLost: e?.disputes_lost ?? 0,
      chargebacks: e?.chargebacks ?? 0,
      fraudReports: e?.fraud_reports ?? 0,
      blocklisted: e?.blocklisted === 1,
      decayed: {
        at: e?.decay_at || now,
        tradesCompleted: e?.d_trades_completed ?? 0,
        tradesCancelled: e?.d_trades_cancelled ?? 0,
        disputesLost: e?.d_disputes_lost ?? 0,
        chargebacks: e?.d_chargebacks ?? 0,
        fraudReports: e?.d_fraud_reports ?? 0,
        fraudulentLosses: e?.d_disputes_lost_fraudulent ?? 0,
      },
      velocity,
      amountStats: c
        ? { n: c.trades, logMean: c.log_mean, logM2: c.log_m2, volume: c.volume }
        : { n: 0, logMean: 0, logM2: 0, volume: 0 },
      counterpartyTrades: cp === undefined ? null : (this.counterparties.get(`${id}\0${cp}`) ?? 0),
      linkedFlaggedEntities: flaggedNeighbours,
      lastTradeAt: known && e.last_trade_at > 0 ? e.last_trade_at : null,
      sharedIdentifierEntities: sharedWith,
      ring,
    };
  }
}

export interface OfflineDecision {
  at: number;
  entityId: string;
  tradeId: string;
  features: Record<SignalName, number>;
  score: number;
  riskLevel: RiskLevel;
  request: LabelledRequest;
}

/** Replays the history in time order and scores every request at its own time under `policy`. */
export function scoreOffline(
  events: readonly TrustEvent[],
  requests: readonly LabelledRequest[],
  policy: Policy = DEFAULT_POLICY,
): OfflineDecision[] {
  const history = new OfflineHistory(policy);
  const decisions: OfflineDecision[] = [];
  let next = 0;
  for (const r of requests) {
    const at = Date.parse(r.at);
    while (next < events.length && Date.parse(events[next]!.occurred_at) <= at) history.apply(events[next++]!);
    const request: ScoreRequest = {
      entity_id: r.body.entity_id,
      amount: r.body.amount,
      currency: r.body.currency,
      context: r.body.context ?? {},
    };
    const profile = history.profile(request, at);
    const result = scoreEntity(profile, request, policy, at);
    decisions.push({
      at,
      entityId: request.entity_id,
      tradeId: String(request.context.trade_id ?? ''),
      features: featureValues(profile, request, policy, at),
      score: result.score,
      riskLevel: result.riskLevel,
      request: r,
    });
  }
  return decisions;
}
