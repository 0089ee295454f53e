// An in-memory stand-in for the event store, so the quality loop (simulate → score → label → fit →
// report) can run in a second without a database or HTTP. It mirrors the aggregates of
// src/trust/ingest.ts and the profile of src/trust/profile.ts (decayed counters, Welford ln-amount
// statistics per currency, 10-minute velocity buckets, counterparty counts, flagged neighbours),
// applying each event at its own time and scoring each request at its own time. It is a model of
// the store for benchmarks, not a second implementation to serve from: the HTTP quality run is the
// reference.
import { DEFAULT_POLICY, type Policy, type SignalName } from '../../src/policies/policy.ts';
import { featureValues } from '../../src/policies/features.ts';
import { scoreEntity } from '../../src/trust/model.ts';
import type { TrustEvent } from '../../src/trust/schemas.ts';
import type { EntityProfile, LinkedIdentifier, RiskLevel, ScoreRequest } from '../../src/trust/types.ts';
import type { LabelledRequest } from './world.ts';

const DAY = 86_400_000;
const BUCKET = 600_000;

interface State {
  firstSeen: number;
  lastEvent: number;
  /** last completed trade (entities.last_trade_at); 0 before the first */
  lastTrade: number;
  counts: { completed: number; cancelled: number; opened: number; won: number; lost: number; chargebacks: number; reports: number };
  decayAt: number;
  decayed: { tradesCompleted: number; tradesCancelled: number; disputesLost: number; chargebacks: number; fraudReports: number };
  blocklisted: boolean;
  blockChangedAt: number;
  currencies: Map<string, { n: number; volume: number; logMean: number; logM2: number }>;
  /** recent completed trades, for the velocity windows */
  recent: { t: number; amount: number; currency: string }[];
  counterparties: Map<string, number>;
  identifiers: Set<string>;
}

export class OfflineHistory {
  private readonly entities = new Map<string, State>();
  /** "type\0hash" → holders */
  private readonly holders = new Map<string, Set<string>>();

  constructor(private readonly policy: Policy = DEFAULT_POLICY) {}

  private state(id: string, t: number): State {
    let s = this.entities.get(id);
    if (!s) {
      s = {
        firstSeen: t, lastEvent: t, lastTrade: 0, decayAt: t, blocklisted: false, blockChangedAt: 0,
        counts: { completed: 0, cancelled: 0, opened: 0, won: 0, lost: 0, chargebacks: 0, reports: 0 },
        decayed: { tradesCompleted: 0, tradesCancelled: 0, disputesLost: 0, chargebacks: 0, fraudReports: 0 },
        currencies: new Map(), recent: [], counterparties: new Map(), identifiers: new Set(),
      };
      this.entities.set(id, s);
    }
    s.firstSeen = Math.min(s.firstSeen, t);
    s.lastEvent = Math.max(s.lastEvent, t);
    return s;
  }

  private bump(s: State, field: keyof State['decayed'], t: number): void {
    const halfLife = this.policy.decayHalfLifeDays * DAY;
    if (t >= s.decayAt) {
      const k = Math.pow(2, -(t - s.decayAt) / halfLife);
      for (const f of Object.keys(s.decayed) as (keyof State['decayed'])[]) s.decayed[f] *= k;
      s.decayAt = t;
      s.decayed[field] += 1;
    } else s.decayed[field] += Math.pow(2, -(s.decayAt - t) / halfLife);
  }

  private resolve(s: State, lost: boolean, t: number): void {
    if (lost) {
      s.counts.lost++;
      this.bump(s, 'disputesLost', t);
    } else s.counts.won++;
  }

  /** Applies one event (in time order, as ingest does within a batch). */
  apply(ev: TrustEvent): void {
    const t = Date.parse(ev.occurred_at);
    const s = this.state(ev.entity_id, t);
    const mirrored = (ev.type === 'dispute.opened' || ev.type === 'dispute.resolved') && ev.counterparty_id !== undefined && ev.counterparty_id !== ev.entity_id
      ? this.state(ev.counterparty_id, t) : undefined;
    for (const l of ev.linked_identifiers ?? []) {
      const key = `${l.type}\0${l.hash}`;
      s.identifiers.add(key);
      const set = this.holders.get(key) ?? new Set<string>();
      set.add(ev.entity_id);
      this.holders.set(key, set);
    }
    switch (ev.type) {
      case 'trade.completed': {
        s.counts.completed++;
        s.lastTrade = Math.max(s.lastTrade, t);
        this.bump(s, 'tradesCompleted', t);
        const c = s.currencies.get(ev.currency!) ?? { n: 0, volume: 0, logMean: 0, logM2: 0 };
        const x = Math.log(ev.amount!);
        c.n++;
        c.volume += ev.amount!;
        const delta = x - c.logMean;
        c.logMean += delta / c.n;
        c.logM2 += delta * (x - c.logMean);
        s.currencies.set(ev.currency!, c);
        s.recent.push({ t, amount: ev.amount!, currency: ev.currency! });
        if (s.recent.length > 64 && s.recent[0]!.t < t - 2 * DAY) s.recent = s.recent.filter((r) => r.t >= t - 2 * DAY);
        if (ev.counterparty_id !== undefined) s.counterparties.set(ev.counterparty_id, (s.counterparties.get(ev.counterparty_id) ?? 0) + 1);
        break;
      }
      case 'trade.cancelled': s.counts.cancelled++; this.bump(s, 'tradesCancelled', t); break;
      case 'dispute.opened': s.counts.opened++; if (mirrored) mirrored.counts.opened++; break;
      case 'dispute.resolved':
        this.resolve(s, ev.resolution === 'against', t);
        if (mirrored) this.resolve(mirrored, ev.resolution !== 'against', t);
        break;
      case 'chargeback': s.counts.chargebacks++; this.bump(s, 'chargebacks', t); break;
      case 'fraud.reported': s.counts.reports++; this.bump(s, 'fraudReports', t); break;
      case 'entity.blocklisted':
      case 'entity.unblocklisted':
        if (t >= s.blockChangedAt) {
          s.blocklisted = ev.type === 'entity.blocklisted';
          s.blockChangedAt = t;
        }
        break;
      case 'identifier.linked': break;
    }
  }

  private flagged(id: string): boolean {
    const s = this.entities.get(id);
    return s !== undefined && (s.counts.reports > 0 || s.blocklisted);
  }

  /** The profile loadProfile would return at `now` for this request. */
  profile(request: ScoreRequest, now: number): EntityProfile {
    const id = request.entity_id;
    const s = this.entities.get(id);
    const linked: LinkedIdentifier[] = request.context.linked_identifiers ?? [];
    const keys = new Set([...(s?.identifiers ?? []), ...linked.map((l) => `${l.type}\0${l.hash}`)]);
    // Counted per shared identifier, as identifier_stats sums them (profile.ts).
    let flaggedNeighbours = 0;
    let sharedWith = 0;
    for (const k of keys) {
      for (const other of this.holders.get(k) ?? []) {
        if (other === id) continue;
        sharedWith++;
        if (this.flagged(other)) flaggedNeighbours++;
      }
    }
    const cp = request.context.counterparty_id;
    const bucket = Math.floor(now / BUCKET);
    const recent = (s?.recent ?? []).filter((r) => r.t <= now);
    const inWindow = (from: number) => recent.filter((r) => Math.floor(r.t / BUCKET) >= from);
    const c = s?.currencies.get(request.currency);
    return {
      entityId: id,
      known: s !== undefined,
      firstSeenAt: s?.firstSeen ?? null,
      lastEventAt: s?.lastEvent ?? null,
      tradesCompleted: s?.counts.completed ?? 0,
      tradesCancelled: s?.counts.cancelled ?? 0,
      disputesOpened: s?.counts.opened ?? 0,
      disputesWon: s?.counts.won ?? 0,
      disputesLost: s?.counts.lost ?? 0,
      chargebacks: s?.counts.chargebacks ?? 0,
      fraudReports: s?.counts.reports ?? 0,
      blocklisted: s?.blocklisted ?? false,
      decayed: { at: s?.decayAt ?? now, ...(s?.decayed ?? { tradesCompleted: 0, tradesCancelled: 0, disputesLost: 0, chargebacks: 0, fraudReports: 0 }) },
      velocity: {
        tradesLastHour: inWindow(bucket - 5).length,
        tradesLastDay: inWindow(bucket - 143).length,
        volumeLastDay: inWindow(bucket - 143).filter((r) => r.currency === request.currency).reduce((a, r) => a + r.amount, 0),
      },
      amountStats: c ? { n: c.n, logMean: c.logMean, logM2: c.logM2, volume: c.volume } : { n: 0, logMean: 0, logM2: 0, volume: 0 },
      counterpartyTrades: cp === undefined ? null : (s?.counterparties.get(cp) ?? 0),
      linkedFlaggedEntities: flaggedNeighbours,
      lastTradeAt: s && s.lastTrade > 0 ? s.lastTrade : null,
      sharedIdentifierEntities: sharedWith,
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
export function scoreOffline(events: readonly TrustEvent[], requests: readonly LabelledRequest[], policy: Policy = DEFAULT_POLICY): OfflineDecision[] {
  const history = new OfflineHistory(policy);
  const decisions: OfflineDecision[] = [];
  let next = 0;
  for (const r of requests) {
    const at = Date.parse(r.at);
    while (next < events.length && Date.parse(events[next]!.occurred_at) <= at) history.apply(events[next++]!);
    const request: ScoreRequest = { entity_id: r.body.entity_id, amount: r.body.amount, currency: r.body.currency, context: r.body.context ?? {} };
    const profile = history.profile(request, at);
    const result = scoreEntity(profile, request, policy, at);
    decisions.push({
      at, entityId: request.entity_id, tradeId: String(request.context.trade_id ?? ''),
      features: featureValues(profile, request, policy, at), score: result.score, riskLevel: result.riskLevel, request: r,
    });
  }
  return decisions;
}
