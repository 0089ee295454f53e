// The simulated market's state and its two outputs: the event history (in the shape POST
// /api/v1/trust/events takes) and labelled score requests (the body POST /api/v1/trust/score
// takes). Populations (populations.ts) decide *what* an entity does; this file turns each trade
// into the request a marketplace would send before releasing funds and the events that follow.
import { createHash } from 'node:crypto';
import type { ScoreBody, TrustEvent } from '../../src/trust/schemas.ts';
import type { PaymentMethod } from '../../src/model/types.ts';
import { chance, exponential, logNormal, type Random } from './prng.ts';

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

export type Population = 'honest' | 'sloppy' | 'throwaway' | 'exit_scam' | 'chargeback' | 'triangulation' | 'mule';
export const FRAUD_POPULATIONS: readonly Population[] = [
  'throwaway',
  'exit_scam',
  'chargeback',
  'triangulation',
  'mule',
];

/** Country, its fiat currency and how many units of it one USD buys (rough, fixed). */
export const COUNTRIES = [
  { country: 'NG', currency: 'NGN', perUsd: 1500, weight: 5 },
  { country: 'KE', currency: 'KES', perUsd: 130, weight: 2 },
  { country: 'GB', currency: 'GBP', perUsd: 0.8, weight: 2 },
  { country: 'DE', currency: 'EUR', perUsd: 0.92, weight: 2 },
  { country: 'US', currency: 'USD', perUsd: 1, weight: 3 },
  { country: 'IN', currency: 'INR', perUsd: 83, weight: 3 },
  { country: 'BR', currency: 'BRL', perUsd: 5, weight: 2 },
  { country: 'PH', currency: 'PHP', perUsd: 56, weight: 1 },
] as const;
export type Country = (typeof COUNTRIES)[number];

export interface Entity {
  index: number;
  id: string;
  population: Population;
  home: Country;
  createdAt: number;
  /** typical trade size in USD */
  typicalUsd: number;
  /** trades per day while active */
  rate: number;
  methods: Partial<Record<PaymentMethod, number>>;
  partners: Entity[];
  /** identifiers shared with others (mule rings, throw-away operators' devices) */
  shared: { type: 'bank_account' | 'device'; hash: string }[];
  /** no trade after this instant (blocklisted or gone) */
  goneAt: number;
}

export type FraudOutcome =
  /** card/e-wallet payment reversed after the crypto left */
  | 'chargeback'
  /** the counterparty disputes and wins; the platform reports the entity */
  | 'reported'
  /** third-party funds: the dispute is lost and the payer's bank recalls the money */
  | 'third_party';

export interface TradeSpec {
  entity: Entity;
  at: number;
  usd: number;
  method: PaymentMethod;
  counterparty: Entity;
  /** null: honest trade */
  fraud: FraudOutcome | null;
  cancel?: boolean;
  /** a dispute that the entity wins (true) or loses (false) without it being fraud (sloppiness) */
  dispute?: 'won' | 'lost';
  /** send context.linked_identifiers with the request */
  showLinked?: boolean;
}

export interface LabelledRequest {
  /** when the marketplace scores the trade (before releasing funds), RFC 3339 */
  at: string;
  body: ScoreBody;
  /** ground truth */
  label: 'fraud' | 'legit';
  /** the label docs/api.md, "Outcomes and labels" would derive from the outcome events that arrive before the end */
  eventLabel: 'fraud' | null;
  population: Population;
  /** events carrying this trade_id for the scored entity, after `at` (each also in `events`) */
  outcomeEvents: TrustEvent[];
}

const hex = (text: string): string => createHash('sha256').update(text).digest('hex');

/** A uniform number in [0, 1) from a trade id and a purpose: decided without drawing from the market's generator. */
const hashed = (tradeId: string, purpose: string): number =>
  createHash('sha256').update(`${tradeId}:${purpose}`).digest().readUInt32BE(0) / 2 ** 32;

/**
 * The reason a marketplace gives when a dispute goes against the entity (docs/api.md, "Events"):
 * 70 % of them send one. Fraud names itself (a fake proof of payment when the platform reports the
 * buyer, a third-party payment when the payer's bank recalls the money); a sloppy trader's loss is
 * a wrong amount or an unanswered dispute. Decided from the trade id, so the market is otherwise
 * the one it was before reasons were sent.
 */
function lossReason(tradeId: string, cause: 'sloppy' | 'reported' | 'third_party'): { reason?: TrustEvent['reason'] } {
  if (hashed(tradeId, 'reason-sent') >= 0.7) return {};
  if (cause === 'reported') return { reason: 'fake_proof' };
  if (cause === 'third_party') return { reason: 'third_party_payment' };
  return { reason: hashed(tradeId, 'reason') < 0.5 ? 'wrong_amount' : 'unresponsive_counterparty' };
}

export class World {
  readonly events: { t: number; seq: number; event: TrustEvent }[] = [];
  readonly requests: { t: number; seq: number; request: LabelledRequest }[] = [];
  private seq = 0;
  private trades = 0;
  private hashes = 0;

  constructor(
    readonly random: Random,
    readonly seed: number,
    readonly start: number,
    readonly end: number,
    /** trades before this instant only build history; no score request is emitted */
    readonly requestsFrom: number,
  ) {}

  entityId(index: number): string {
    return hex(`vouch-sim:${this.seed}:entity:${index}`);
  }

  newHash(): string {
    return hex(`vouch-sim:${this.seed}:identifier:${this.hashes++}`);
  }

  /** Records an event at `t` (dropped if after the end: it has not happened yet). */
  event(t: number, type: TrustEvent['type'], entity: Entity, extra: Partial<TrustEvent> = {}): TrustEvent | null {
    if (t > this.end) return null;
    const event = {
      event_id: `sim_${this.seed}_ev${this.seq}`,
      type,
      entity_id: entity.id,
      occurred_at: new Date(Math.floor(t)).toISOString(),
      ...extra,
    } as TrustEvent;
    this.events.push({ t, seq: this.seq++, event });
    return event;
  }

  amount(usd: number, home: Country): number {
    return Math.max(0.01, Math.round(usd * home.perUsd * 100) / 100);
  }

  /** One trade: the score request (after the warm-up), then what happens to it. */
  trade(spec: TradeSpec): void {
    const { entity: e, at, counterparty: cp, random } = { ...spec, random: this.random };
    if (at > this.end || at < this.start) return;
    const tradeId = `sim_${this.seed}_tr${this.trades++}`;
    const currency = e.home.currency;
    const amount = this.amount(spec.usd, e.home);
    const money = { amount, currency };
    const outcome: TrustEvent[] = [];
    const own = (t: number, type: TrustEvent['type'], extra: Partial<TrustEvent> = {}) => {
      const ev = this.event(t, type, e, { counterparty_id: cp.id, trade_id: tradeId, ...extra });
      if (ev) outcome.push(ev);
    };

    const done = at + exponential(random, 20 * MINUTE) + MINUTE;
    if (spec.cancel) {
      own(done, 'trade.cancelled');
    } else {
      own(done, 'trade.completed', money);
      this.event(done, 'trade.completed', cp, { counterparty_id: e.id, trade_id: tradeId, ...money });
    }
    if (spec.dispute) {
      const opened = done + exponential(random, DAY);
      own(opened, 'dispute.opened');
      own(
        opened + exponential(random, 3 * DAY) + HOUR,
        'dispute.resolved',
        spec.dispute === 'won'
          ? { resolution: 'in_favor' }
          : { resolution: 'against', ...lossReason(tradeId, 'sloppy') },
      );
    }
    if (spec.fraud === 'chargeback') {
      own(done + 5 * DAY + exponential(random, 20 * DAY), 'chargeback', money);
      if (chance(random, 0.3)) own(done + 40 * DAY + exponential(random, 10 * DAY), 'fraud.reported');
    } else if (spec.fraud === 'reported') {
      const opened = done + exponential(random, 12 * HOUR) + HOUR;
      own(opened, 'dispute.opened');
      own(opened + exponential(random, 2 * DAY) + HOUR, 'dispute.resolved', {
        resolution: 'against',
        ...lossReason(tradeId, 'reported'),
      });
      own(opened + exponential(random, 4 * DAY) + HOUR, 'fraud.reported');
    } else if (spec.fraud === 'third_party') {
      const opened = done + exponential(random, 3 * DAY) + HOUR;
      own(opened, 'dispute.opened');
      own(opened + exponential(random, 4 * DAY) + HOUR, 'dispute.resolved', {
        resolution: 'against',
        ...lossReason(tradeId, 'third_party'),
      });
      if (chance(random, 0.5)) own(opened + exponential(random, 10 * DAY), 'chargeback', money);
    }

    if (at < this.requestsFrom) return;
    const context: ScoreBody['context'] = {
      counterparty_id: cp.id,
      side: 'buy',
      payment_method: spec.method,
      country: e.home.country,
      counterparty_country: cp.home.country,
      trade_id: tradeId,
    };
    // Most marketplaces know the account's age; some never send it.
    if (chance(random, 0.7)) context.account_created_at = new Date(e.createdAt).toISOString();
    if (spec.showLinked && e.shared.length > 0)
      context.linked_identifiers = e.shared.map((s) => ({ type: s.type, hash: s.hash }));
    const labelling = new Set<TrustEvent['type']>(['chargeback', 'fraud.reported']);
    const eventLabel = outcome.some(
      (ev) => labelling.has(ev.type) || (ev.type === 'dispute.resolved' && ev.resolution === 'against'),
    )
      ? 'fraud'
      : null;
    this.requests.push({
      t: at,
      seq: this.seq++,
      request: {
        at: new Date(Math.floor(at)).toISOString(),
        body: { entity_id: e.id, amount, currency, context },
        label: spec.fraud ? 'fraud' : 'legit',
        eventLabel,
        population: e.population,
        outcomeEvents: outcome.sort((a, b) => Date.parse(a.occurred_at) - Date.parse(b.occurred_at)),
      },
    });
  }

  /** Trade times of a Poisson process with `rate` per day over [from, to). */
  arrivals(from: number, to: number, rate: number): number[] {
    const times: number[] = [];
    if (rate <= 0) return times;
    for (let t = from + exponential(this.random, DAY / rate); t < to; t += exponential(this.random, DAY / rate))
      times.push(t);
    return times;
  }

  /** A trade size around the entity's typical one. */
  size(e: Entity, factor = 1, sigma = 0.45): number {
    return logNormal(this.random, e.typicalUsd * factor, sigma);
  }
}
