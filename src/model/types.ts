// Types shared by the scoring model (pure), the history store and the routes.
// All times are epoch milliseconds; the model never reads the clock itself.
import type { PeerFlag } from './network-signal.ts';
import type { Ring } from './ring.ts';

export const PAYMENT_METHODS = [
  'bank_transfer',
  'card',
  'mobile_money',
  'cash',
  'e_wallet',
  'crypto',
  'other',
] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

export interface LinkedIdentifier {
  type: 'phone' | 'bank_account' | 'email' | 'device' | 'other';
  hash: string;
}

/** The known members of a score request's `context`; unknown members are ignored by the model. */
export interface ScoreContext {
  counterparty_id?: string;
  side?: 'buy' | 'sell';
  payment_method?: PaymentMethod;
  country?: string;
  counterparty_country?: string;
  account_created_at?: string;
  trade_id?: string;
  linked_identifiers?: LinkedIdentifier[];
  [key: string]: unknown;
}

export interface ScoreRequest {
  entity_id: string;
  amount: number;
  currency: string;
  context: ScoreContext;
}

/**
 * Counters that fade with age. `at` is the instant the values were last brought forward;
 * the model decays them from `at` to `now` with the policy's half-life.
 */
export interface DecayedCounts {
  at: number;
  tradesCompleted: number;
  tradesCancelled: number;
  disputesLost: number;
  chargebacks: number;
  fraudReports: number;
  /** disputes lost for a fraud (third-party payment, fake proof, underpayment, no payment); absent = 0 */
  fraudulentLosses?: number;
}

/** Everything the store knows about one entity, loaded before scoring. Counts are plain (undecayed). */
/** Lost disputes per fraud-naming reason of their dispute.resolved event (docs/api.md, "Events"). */
export interface LossReasonCounts {
  third_party_payment: number;
  fake_proof: number;
  underpayment: number;
  no_payment: number;
}

export interface EntityProfile {
  entityId: string;
  /** false for an entity that has never been seen (cold start) */
  known: boolean;
  firstSeenAt: number | null;
  lastEventAt: number | null;
  tradesCompleted: number;
  tradesCancelled: number;
  disputesOpened: number;
  disputesWon: number;
  disputesLost: number;
  /** of disputesLost, those whose dispute.resolved named that fraud as the reason (undecayed); absent = none */
  disputesLostFor?: LossReasonCounts;
  chargebacks: number;
  fraudReports: number;
  blocklisted: boolean;
  decayed: DecayedCounts;
  /** completed trades and volume (in the request's currency) in the hour / day before `now` */
  velocity: { tradesLastHour: number; tradesLastDay: number; volumeLastDay: number };
  /** log-amount statistics of completed trades in the request's currency; n = 0 when none */
  amountStats: { n: number; logMean: number; logM2: number; volume: number };
  /** completed trades with the request's counterparty; null when the request names none */
  counterpartyTrades: number | null;
  /** other entities that are fraud-reported or blocklisted and share an identifier with this
   *  entity (its stored identifiers plus the request's linked_identifiers), counted per shared
   *  identifier from identifier_stats */
  linkedFlaggedEntities: number;
  /** last completed trade (epoch ms); absent or null when unknown (dormant_reactivation is then 0) */
  lastTradeAt?: number | null;
  /** other entities holding an identifier this entity holds or the request names, counted per
   *  shared identifier from identifier_stats (flagged or not); absent = 0 */
  sharedIdentifierEntities?: number;
  /** the active peers whose flags match an identifier the entity holds or the request names, as of
   *  the last network sync (docs/network.md); absent = none */
  networkFlags?: PeerFlag[];
  /** the entity's ring within two hops (src/rings/graph.ts), walked with the policy's fanout; absent = none */
  ring?: Ring | null;
}

export interface Signal {
  name: string;
  value: number;
  weight: number;
  /** one plain sentence of what was seen, with the figure; never an identifier (descriptions.ts) */
  description: string;
}

export type RiskLevel = 'low' | 'medium' | 'high' | 'critical';

export interface ScoreResult {
  score: number;
  riskLevel: RiskLevel;
  signals: Signal[];
  policyVersion: string;
}
