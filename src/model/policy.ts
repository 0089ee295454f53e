// The versioned scoring policy (docs/api.md, "Trust scoring"). A policy file is a complete document, never a
// patch over the defaults: the `version` stamped on every decision must identify every number
// that produced it, so nothing may be filled in silently.
import { EconomicsSchema } from './economics.ts';
import { SIGNAL_NAMES, type SignalName } from './signal-names.ts';
import { PairsSchema } from './pairs.ts';
import { Type, type Static } from 'typebox';
import { DEFAULT_DISPUTE_POLICY, DisputePolicySchema } from './dispute-policy.ts';
import { PAYMENT_METHODS } from './types.ts';
import { CurrencyCode, DEFAULT_NEW_ACCOUNTS, NewAccountsSchema } from './new-accounts.ts';
import { OutcomesSchema, ReviewHoursSchema, ReviewListsSchema, ReviewSampleRateSchema } from './outcome-policy.ts';

export { SIGNAL_DIRECTIONS, SIGNAL_NAMES, type SignalName } from './signal-names.ts';

const strict = { additionalProperties: false } as const;
const Finite = (opts: { minimum?: number; maximum?: number; exclusiveMinimum?: number } = {}) => Type.Number(opts);
const Positive = () => Finite({ exclusiveMinimum: 0 });

const WeightsSchema = Type.Object(
  Object.fromEntries(SIGNAL_NAMES.map((n) => [n, Finite({ minimum: -100, maximum: 100 })])) as Record<
    SignalName,
    ReturnType<typeof Finite>
  >,
  strict,
);

const PaymentMethodRiskSchema = Type.Object(
  Object.fromEntries(PAYMENT_METHODS.map((m) => [m, Finite({ minimum: 0, maximum: 1 })])) as Record<
    (typeof PAYMENT_METHODS)[number],
    ReturnType<typeof Finite>
  >,
  strict,
);

/** At most this many knots per shaped signal: a shape an operator can read at a glance. */
const MAX_KNOTS = 8;

/**
 * A shaped signal (src/model/shapes.ts, docs/signals.md "Shaped signals"): the weight is the
 * slope from 0 to knots[0]; slopes[i] the slope from knots[i] on. semanticProblems checks the order
 * and the signs.
 */
const ShapeSchema = Type.Object(
  {
    knots: Type.Array(Finite({ exclusiveMinimum: 0, maximum: 1e6 }), { minItems: 1, maxItems: MAX_KNOTS }),
    slopes: Type.Array(Finite({ minimum: -100, maximum: 100 }), { minItems: 1, maxItems: MAX_KNOTS }),
  },
  strict,
);

const ShapesSchema = Type.Object(
  Object.fromEntries(SIGNAL_NAMES.map((n) => [n, Type.Optional(ShapeSchema)])) as Record<
    SignalName,
    ReturnType<typeof Type.Optional<typeof ShapeSchema>>
  >,
  strict,
);

export const PolicySchema = Type.Object(
  {
    version: Type.String({ minLength: 1, maxLength: 64 }),
    bias: Finite({ minimum: -100, maximum: 100 }),
    weights: WeightsSchema,
    /** optional: signals whose contribution bends (absent: every signal is weight·value) */
    shapes: Type.Optional(ShapesSchema),
    thresholds: Type.Object(
      {
        medium: Type.Integer({ minimum: 1, maximum: 99 }),
        high: Type.Integer({ minimum: 1, maximum: 99 }),
        critical: Type.Integer({ minimum: 1, maximum: 99 }),
      },
      strict,
    ),
    cacheTtlSeconds: Type.Integer({ minimum: 0, maximum: 86_400 }),
    decayHalfLifeDays: Positive(),
    disputePrior: Type.Object({ alpha: Positive(), beta: Positive() }, strict),
    cryptoAssets: Type.Array(Type.String({ pattern: CurrencyCode }), { maxItems: 200 }),
    paymentMethodRisk: PaymentMethodRiskSchema,
    /** an account younger than this many days adds new_account risk, falling linearly to 0 */
    newAccountDays: Positive(),
    velocity: Type.Object(
      {
        /** completed trades per day / per hour tolerated on top of the entity's own norm */
        tradesPerDayAllowance: Positive(),
        tradesPerHourAllowance: Positive(),
        /** day volume tolerated on top of the norm, in multiples of the entity's typical trade */
        volumeAllowanceTrades: Positive(),
        /** cap on either velocity value (which is ln of the overshoot ratio) */
        cap: Positive(),
      },
      strict,
    ),
    amount: Type.Object(
      {
        /** standard deviations of ln(amount) above the mean that cost nothing */
        toleranceSigma: Finite({ minimum: 0 }),
        /** floor on the standard deviation, so one or two identical past trades do not make
         *  every different amount look extreme */
        minLogStd: Positive(),
        cap: Positive(),
        /** value used when the entity has no completed trade in the request's currency */
        noHistoryValue: Finite({ minimum: 0 }),
      },
      strict,
    ),
    linkedFlaggedCap: Type.Integer({ minimum: 1, maximum: 100 }),
    /** identifiers held by more entities than this are hubs: shown in a ring, never traversed (1: no ring) */
    maxIdentifierFanout: Type.Integer({ minimum: 1, maximum: 10_000 }),
    dispute: DisputePolicySchema,
    /**
     * trust tiers for new accounts (docs/signals.md, "New accounts"); absent in policies that predate them: the
     * defaults
     */
    newAccounts: Type.Optional(NewAccountsSchema),
    /**
     * risk level → outcome when no rule says otherwise (docs/rules.md); absent: low/medium approve, high review,
     * critical decline
     */
    outcomes: Type.Optional(OutcomesSchema),
    /** hours a review may wait before it is due, by outcome (docs/api.md, "Reviews"); absent: review 24, hold 4 */
    reviewHours: Type.Optional(ReviewHoursSchema),
    /** the share of approvals that open a review anyway, against selection bias; absent: 0 */
    reviewSampleRate: Type.Optional(ReviewSampleRateSchema),
    /** the entity lists a reviewer without rules:write may add a review's entity to; absent: none */
    reviewLists: Type.Optional(ReviewListsSchema),
    /** docs/api.md, "Decisions by money": with it, the outcome is the one of least expected cost */
    economics: Type.Optional(EconomicsSchema),
    /** pairwise terms (docs/signals.md, "Pairs"): weight·(a·b) of two risk signals, as a fit learns them */
    pairs: Type.Optional(PairsSchema),
  },
  strict,
);

export type Policy = Static<typeof PolicySchema>;
export type Thresholds = Policy['thresholds'];

export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/**
 * Default weights are calibrated in test/trust/model.test.ts; see docs/signals.md. 2026-11-24.1
 * centred dispute_rate on its prior (a newcomer no longer carries the prior's mean as risk) and
 * moved bias and completed_trades to keep the ranking and the share of trades flagged.
 * 2026-11-25.1 added the ring signals and maxIdentifierFanout (docs/signals.md, "Rings");
 * 2026-11-25.2 added network_flags (the network, docs/network.md); 2026-11-25.3 the dispute part's
 * priorFraudulentLoss (losses for fake proof, third-party payment, underpayment or no payment).
 * 2026-11-26.1 added the new-account tiers (newAccounts) and retuned bias and the non-ring weights
 * (docs/signals.md, "New accounts" and "The 2026-11-26.1 retune"), the two interactions (weights 0)
 * of docs/signals.md, "Interactions", fraudulent_dispute_losses (disputes lost for a fraud), and
 * ring_size counting only the entities beyond a household (src/model/ring-signals.ts).
 */
export const DEFAULT_POLICY: Policy = deepFreeze({
  version: '2026-11-26.1',
  // -1.7 until 2026-11-26.1 (-1.6 until 2026-11-24.1): lowered so that a clean newcomer within its tier
  // limit stays below high whatever its method and counterparty (docs/signals.md, "New accounts"),
  // with the history signals raised to keep the frauds (docs/signals.md, "The 2026-11-26.1 retune")
  bias: -2.7,
  weights: {
    completed_trades: -0.16,
    dispute_rate: 12,
    cancellation_rate: 1.5,
    chargebacks: 3.5,
    fraud_reports: 3.5,
    blocklisted: 8,
    new_account: 0.6,
    cold_start: 0.2,
    velocity_trades: 1,
    velocity_volume: 0.5,
    amount_vs_history: 0.8,
    new_counterparty: 0.3,
    payment_method_risk: 1,
    cross_border: 0.4,
    linked_flagged_entities: 2.5,
    cash_out_burst: 2.5,
    dormant_reactivation: 0.3,
    young_account_reversible_method: 1,
    shared_identifier_entities: 1,
    new_counterparty_large_trade: 1,
    // The network (2026-11-25.2, docs/signals.md): 0.95 log-odds for a lone peer's fresh flag (its
    // value is 0.5), well under one local flagged neighbour's 2.5; two agreeing peers (1.5) give 2.85.
    // 1.5 until 2026-11-26.1, raised with linked_flagged_entities (2 → 2.5) and the lower bias.
    network_flags: 1.9,
    // Rings (issue 21)
    ring_flagged_entities: 1,
    ring_size: 0.1,
    // Interactions (2026-11-26.1, docs/signals.md "Interactions"): 0 by hand, so the hand-set
    // scores are unchanged; a fit may weigh them.
    reversible_new_counterparty: 0,
    cross_border_new_counterparty: 0,
    // Dispute reasons (2026-11-26.1, docs/signals.md)
    fraudulent_dispute_losses: 0.5,
  },
  thresholds: { medium: 30, high: 60, critical: 85 },
  cacheTtlSeconds: 30,
  decayHalfLifeDays: 180,
  disputePrior: { alpha: 1, beta: 9 },
  cryptoAssets: ['BTC', 'ETH', 'USDT', 'USDC', 'BNB', 'SOL', 'TRX', 'XRP', 'LTC', 'DAI'],
  paymentMethodRisk: {
    bank_transfer: 0.3,
    card: 0.8,
    mobile_money: 0.4,
    cash: 0.2,
    e_wallet: 0.5,
    crypto: 0.1,
    other: 0.6,
  },
  newAccountDays: 90,
  velocity: { tradesPerDayAllowance: 5, tradesPerHourAllowance: 2, volumeAllowanceTrades: 3, cap: 3 },
  amount: { toleranceSigma: 1, minLogStd: 0.5, cap: 4, noHistoryValue: 0.5 },
  linkedFlaggedCap: 3,
  maxIdentifierFanout: 25,
  dispute: DEFAULT_DISPUTE_POLICY,
  newAccounts: DEFAULT_NEW_ACCOUNTS,
});
