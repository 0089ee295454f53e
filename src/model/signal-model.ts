// The scoring model (docs/api.md, "Trust scoring"): pure, deterministic, additive in log-odds. It never reads the
// clock or any store; the caller passes the profile, the request, the policy and `now`.
// Signal definitions and the reasoning behind them are in docs/signals.md.
//
// The signals are computed in two parts: those that do not depend on the request's amount (once
// per request) and those that do (amount-signals.ts). safe-amount.ts inverts the score over the second
// part alone, so it needs no second profile and no re-computation of the rest. The sum itself
// (values → contributions → score → level) is src/model/arithmetic.ts's, the one every replay uses.
import { describePair, isPairName } from './pairs.ts';
import { SIGNAL_NAMES, type Policy, type SignalName } from './policy.ts';
import { modelValue, riskLevelFor, scoreValues } from './arithmetic.ts';
import { describeSignal, type Facts } from './descriptions.ts';
import {
  disputeExcess,
  dormancy,
  fraudulentLossesValue,
  INTERACTIONS,
  sharedIdentifierValue,
  youngReversible,
} from './features.ts';
import { AMOUNT_SIGNALS, amountValuesInto, type AmountSignal, type AmountTerms } from './amount-signals.ts';
import type { EntityProfile, ScoreRequest, ScoreResult, Signal } from './types.ts';
import { networkFlagsSignal, type NetworkSignal } from './network-signal.ts';
import { NO_RING, ringFacts, ringFlaggedValue, ringSizeValue } from './ring-signals.ts';
import { tierFor } from './tiers.ts';
import { showsWarningSign } from './warning-signs.ts';

const DAY_MS = 86_400_000;
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Non-finite or negative counts from a damaged profile count as zero rather than poisoning the sum. */
const count = (x: number | undefined): number => (x !== undefined && Number.isFinite(x) && x > 0 ? x : 0);
const clip = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x));

/** ln of how far `observed` overshoots `allowed`; 0 while within it. */
const overshoot = (observed: number, allowed: number, cap: number): number =>
  allowed > 0 ? clip(Math.log(Math.max(1, observed / allowed)), 0, cap) : 0;

/** Brings a value recorded at `at` forward to `now`; never amplifies when `at` is in the future. */
export function decayFactor(at: number, now: number, halfLifeDays: number): number {
  if (!Number.isFinite(at) || !Number.isFinite(now) || now <= at) return 1;
  return Math.pow(2, -(now - at) / (halfLifeDays * DAY_MS));
}

/** Account age in days: the caller's account_created_at when valid, else first sight; no history = brand new. */
function accountAgeDays(profile: EntityProfile, request: ScoreRequest, now: number): number {
  const created = request.context.account_created_at;
  let since: number | null = null;
  if (typeof created === 'string' && RFC3339.test(created)) {
    const t = Date.parse(created);
    if (Number.isFinite(t)) since = t;
  }
  if (since === null && profile.known && profile.firstSeenAt !== null && Number.isFinite(profile.firstSeenAt)) {
    since = profile.firstSeenAt;
  }
  return since === null ? 0 : Math.max(0, now - since) / DAY_MS;
}

/** Days the entity has been active, at least one, so a same-day entity's norm is its day's count. */
function activeDays(profile: EntityProfile, now: number): number {
  const first = profile.firstSeenAt;
  if (first === null || !Number.isFinite(first)) return 1;
  return Math.max(1, (now - first) / DAY_MS);
}

function sameCountry(a: unknown, b: unknown): boolean | null {
  if (typeof a !== 'string' || typeof b !== 'string' || a === '' || b === '') return null;
  return a.toUpperCase() === b.toUpperCase();
}

export interface Prepared {
  /** raw values of every signal that does not depend on the amount */
  fixed: Record<Exclude<SignalName, AmountSignal>, number>;
  terms: AmountTerms;
  facts: Facts;
  /** network_flags and the peers behind it, for the decision record */
  network: NetworkSignal;
}

/** Everything about one entity and context that does not depend on the amount. */
export function prepare(profile: EntityProfile, request: ScoreRequest, policy: Policy, now: number): Prepared {
  const ctx = request.context;
  const f = decayFactor(profile.decayed.at, now, policy.decayHalfLifeDays);
  const d = profile.decayed;
  const trades = count(d.tradesCompleted) * f;
  const cancelled = count(d.tradesCancelled) * f;
  const lost = count(d.disputesLost) * f;
  const { alpha, beta } = policy.disputePrior;

  const days = activeDays(profile, now);
  const tradeNorm = count(profile.tradesCompleted) / days;
  const v = policy.velocity;
  const velocityTrades = Math.max(
    overshoot(count(profile.velocity.tradesLastDay), tradeNorm + v.tradesPerDayAllowance, v.cap),
    overshoot(count(profile.velocity.tradesLastHour), tradeNorm / 24 + v.tradesPerHourAllowance, v.cap),
  );
  // A slow trader's second trade of the day is already a burst; its first is not.
  const burst = clip(Math.log(count(profile.velocity.tradesLastDay) / (tradeNorm + 1)), 0, v.cap);

  const stats = profile.amountStats;
  const n = count(stats.n);
  const hasHistory = n >= 1 && Number.isFinite(stats.logMean);
  let velocityVolume = 0;
  let logMean = 0;
  let std = policy.amount.minLogStd;
  let dayVolumeRatio = 0;
  if (hasHistory) {
    // Without a history in this currency there is no norm to exceed; amount_vs_history carries
    // the "unknown territory" risk instead, so the cold start is not charged twice.
    logMean = stats.logMean;
    const typical = Math.exp(clip(stats.logMean, -700, 700));
    const dailyNorm = count(stats.volume) / days;
    const volumeAllowed = dailyNorm + typical * v.volumeAllowanceTrades;
    velocityVolume = overshoot(count(profile.velocity.volumeLastDay), volumeAllowed, v.cap);
    dayVolumeRatio = dailyNorm > 0 ? count(profile.velocity.volumeLastDay) / dailyNorm : 0;
    const variance = n >= 2 ? count(stats.logM2) / (n - 1) : 0;
    std = Math.max(Math.sqrt(variance), policy.amount.minLogStd);
  }

  const age = accountAgeDays(profile, request, now);
  const newAccount = clip(1 - age / policy.newAccountDays, 0, 1);
  const method = ctx.payment_method;
  const methodRisk =
    typeof method === 'string' && Object.hasOwn(policy.paymentMethodRisk, method)
      ? policy.paymentMethodRisk[method as keyof Policy['paymentMethodRisk']]
      : 0;
  const cpTrades = profile.counterpartyTrades;
  const newCounterparty = cpTrades !== null && count(cpTrades) === 0;
  const dormant = profile.known ? dormancy(profile.lastTradeAt, now) : { value: 0, gapDays: 0 };
  const linkedFlagged = Math.min(count(profile.linkedFlaggedEntities), policy.linkedFlaggedCap);
  const network = networkFlagsSignal(profile.networkFlags ?? [], now);
  const ring = profile.ring ? ringFacts(profile.ring, now, policy.decayHalfLifeDays) : NO_RING;
  // From the parts' rounded values, as replayableFeatures derives them for older vectors.
  const parts = {
    new_counterparty: newCounterparty ? 1 : 0,
    payment_method_risk: modelValue(methodRisk),
    cross_border: sameCountry(ctx.country, ctx.counterparty_country) === false ? 1 : 0,
  };

  const fixed: Prepared['fixed'] = {
    completed_trades: Math.log2(1 + trades),
    dispute_rate: disputeExcess(lost, trades, alpha, beta),
    cancellation_rate: trades + cancelled > 0 ? cancelled / (trades + cancelled) : 0,
    chargebacks: Math.log2(1 + count(d.chargebacks) * f),
    fraud_reports: Math.log2(1 + count(d.fraudReports) * f),
    blocklisted: profile.blocklisted ? 1 : 0,
    new_account: newAccount,
    cold_start: profile.known ? 0 : 1,
    velocity_trades: velocityTrades,
    velocity_volume: velocityVolume,
    new_counterparty: parts.new_counterparty,
    payment_method_risk: methodRisk,
    cross_border: parts.cross_border,
    linked_flagged_entities: linkedFlagged,
    dormant_reactivation: dormant.value,
    young_account_reversible_method: youngReversible(newAccount, methodRisk),
    shared_identifier_entities: sharedIdentifierValue(profile.sharedIdentifierEntities),
    network_flags: network.value,
    fraudulent_dispute_losses: fraudulentLossesValue(count(d.fraudulentLosses) * f),
    ring_flagged_entities: ringFlaggedValue(ring),
    ring_size: ringSizeValue(ring),
    reversible_new_counterparty: INTERACTIONS.reversible_new_counterparty(parts),
    cross_border_new_counterparty: INTERACTIONS.cross_border_new_counterparty(parts),
  };
  const clean = burst === 0 && !showsWarningSign(fixed);
  const tier = tierFor(policy, request.currency, age, count(profile.tradesCompleted));

  return {
    fixed,
    terms: {
      hasHistory,
      logMean,
      std,
      newCounterparty,
      burst,
      limit: tier.limit,
      clean,
      toleranceSigma: policy.amount.toleranceSigma,
      cap: policy.amount.cap,
      noHistoryValue: policy.amount.noHistoryValue,
    },
    facts: {
      tradesCompleted: count(profile.tradesCompleted),
      tradesCancelled: count(profile.tradesCancelled),
      disputesLost: count(profile.disputesLost),
      disputesLostFor: profile.disputesLostFor,
      expectedDisputeRate: alpha / (alpha + beta),
      chargebacks: count(profile.chargebacks),
      fraudReports: count(profile.fraudReports),
      ageDays: age,
      tradesLastDay: count(profile.velocity.tradesLastDay),
      tradesLastHour: count(profile.velocity.tradesLastHour),
      tradesPerDay: tradeNorm,
      dayVolumeRatio,
      typicalAmount: hasHistory ? Math.exp(clip(logMean, -700, 700)) : 0,
      currency: request.currency,
      paymentMethod: typeof method === 'string' ? method : '',
      linkedFlagged,
      sharedEntities: count(profile.sharedIdentifierEntities),
      dormantDays: dormant.gapDays,
      amount: request.amount,
      // named in a description only where the limit shaped the value: a clean entity's, or any without history
      tierLimit: clean || !hasHistory ? tier.limit : 0,
      network: network.description,
      ring,
    },
    network,
  };
}

/** The amount-dependent signals' raw values for `amount`, in AMOUNT_SIGNALS order. */
function amountArray(prepared: Prepared, amount: number): number[] {
  const values = [0, 0, 0];
  amountValuesInto(prepared.terms, amount, values);
  return values;
}

/** Per SIGNAL_NAMES position: the index in AMOUNT_SIGNALS, or -1 for a fixed signal. */
const AMOUNT_SLOT: readonly number[] = SIGNAL_NAMES.map((name) =>
  (AMOUNT_SIGNALS as readonly SignalName[]).indexOf(name),
);

/** Every signal's value as the model sums it (modelValue), zeros included, in SIGNAL_NAMES order. */
function roundedValues(fixed: Prepared['fixed'], amounts: readonly number[]): Record<SignalName, number> {
  const values = {} as Record<SignalName, number>;
  for (let k = 0; k < SIGNAL_NAMES.length; k++) {
    const name = SIGNAL_NAMES[k]!;
    const i = AMOUNT_SLOT[k]!;
    values[name] = modelValue(i < 0 ? fixed[name as keyof Prepared['fixed']] : amounts[i]!);
  }
  return values;
}

/**
 * One score and what the next steps need from it, handed on as values: the signal values (the
 * feature vector docs/api.md, "Outcomes and labels" stores with a decision, and the shadow
 * policy's input) and the prepared terms (safe-amount.ts searches over the amount with them).
 */
export interface Evaluation {
  result: ScoreResult;
  values: Record<SignalName, number>;
  prepared: Prepared;
}

export function evaluate(profile: EntityProfile, request: ScoreRequest, policy: Policy, now: number): Evaluation {
  const prepared = prepare(profile, request, policy, now);
  const values = roundedValues(prepared.fixed, amountArray(prepared, request.amount));
  const { signals: parts, score } = scoreValues(policy, values);
  const signals: Signal[] = parts.map((s) => ({
    name: s.name,
    value: s.value,
    weight: s.weight,
    description: isPairName(s.name) ? describePair(s.name) : describeSignal(s.name, s.value, prepared.facts),
  }));
  return {
    result: { score, riskLevel: riskLevelFor(score, policy.thresholds), signals, policyVersion: policy.version },
    values,
    prepared,
  };
}

export function scoreEntity(profile: EntityProfile, request: ScoreRequest, policy: Policy, now: number): ScoreResult {
  return evaluate(profile, request, policy, now).result;
}

/** The non-zero-contribution signals, values rounded to 4 decimals, largest |weight·value| first. */
export function computeSignals(profile: EntityProfile, request: ScoreRequest, policy: Policy, now: number): Signal[] {
  return evaluate(profile, request, policy, now).result.signals;
}

/**
 * Every signal's value as the model sums it (rounded to 4 decimals, non-finite as 0), zeros
 * included, in SIGNAL_NAMES order. Weights play no part in a value, so this is the same for every
 * policy that shares the other settings.
 */
export function signalValues(
  profile: EntityProfile,
  request: ScoreRequest,
  policy: Policy,
  now: number,
): Record<SignalName, number> {
  const prepared = prepare(profile, request, policy, now);
  return roundedValues(prepared.fixed, amountArray(prepared, request.amount));
}
