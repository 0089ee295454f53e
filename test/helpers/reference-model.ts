// Reference computations for the property tests, written from the docs rather than from the code
// they check, so that a bug in the code is not repeated here:
// - the sum (docs/signals.md, "Formula"): values rounded to 4 decimals, zero contributions left out,
//   sorted by |weight·value| then name, round(100·σ(bias + Σ weight·value));
// - the three amount signals (docs/signals.md, the `amount_vs_history`, `cash_out_burst` and
//   `new_counterparty_large_trade` rows) on the entity's amount-free terms;
// - safe_amount (docs/decisions.md, "safe_amount precision"): the largest amount on the currency's
//   minor-unit grid that scores below `high`, found on that reference score alone.
// The amount-free signal values and their terms still come from the model's `prepare`; the worked
// examples of test/trust/model.test.ts are what check those.
import { SIGNAL_NAMES, type Policy, type SignalName } from '../../src/model/policy.ts';
import { prepare, type Prepared } from '../../src/model/signal-model.ts';
import type { AmountSignal } from '../../src/model/amount-signals.ts';
import { describeSignal } from '../../src/model/descriptions.ts';
import type { EntityProfile, ScoreRequest, Signal } from '../../src/model/types.ts';

// The rounding and the sum as docs/signals.md, "Formula" states them.
const round4 = (x: number): number => Math.round(x * 1e4) / 1e4 + 0;
/** The score a response's explanation gives: bias plus each weight·value in the order listed, through the formula. */
export function referenceScoreFromSignals(bias: number, signals: readonly Pick<Signal, 'weight' | 'value'>[]): number {
  let z = bias;
  for (const s of signals) z += s.weight * s.value;
  return Math.round(100 / (1 + Math.exp(-z)));
}

/** A linear policy's score on signal values (absent ones 0): the terms in summing order, and the score. */
export function referenceLinearScore(
  policy: Pick<Policy, 'bias' | 'weights'>,
  values: Partial<Record<SignalName, number>>,
) {
  const raw = Object.fromEntries(SIGNAL_NAMES.map((n) => [n, values[n] ?? 0])) as Record<SignalName, number>;
  const signals = referenceAssemble(raw, policy).map(({ name, value, weight }) => ({ name, value, weight }));
  return { signals, score: referenceScoreFromSignals(policy.bias, signals) };
}

/** The signals a score lists, from raw values: rounded, the zero contributions left out, in summing order. */
export function referenceAssemble(raw: Record<SignalName, number>, policy: Pick<Policy, 'weights'>): Signal[] {
  const signals: Signal[] = [];
  for (const [name, rawValue] of Object.entries(raw) as [SignalName, number][]) {
    const value = Number.isFinite(rawValue) ? round4(rawValue) : 0;
    const weight = policy.weights[name];
    if (weight * value !== 0) signals.push({ name, value, weight, description: '' });
  }
  return signals.sort((a, b) => {
    const diff = Math.abs(b.weight * b.value) - Math.abs(a.weight * a.value);
    return diff !== 0 ? diff : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  });
}

/** computeSignals the plain way: one record of every raw value, assembled, then described. */
export function referenceComputeSignals(
  profile: EntityProfile,
  request: ScoreRequest,
  policy: Policy,
  now: number,
): Signal[] {
  const prepared = prepare(profile, request, policy, now);
  const raw = { ...prepared.fixed, ...referenceAmountValues(prepared.terms, request.amount) };
  const signals = referenceAssemble(raw, policy);
  const facts = { ...prepared.facts, amount: request.amount };
  for (const s of signals) s.description = describeSignal(s.name as SignalName, s.value, facts);
  return signals;
}

/**
 * Every signal's value as a decision stores it (docs/api.md, "Outcomes and labels"): in
 * SIGNAL_NAMES order, zeros included, each rounded as the sum takes it.
 */
export function referenceFeatureValues(
  profile: EntityProfile,
  request: ScoreRequest,
  policy: Policy,
  now: number,
): Record<SignalName, number> {
  const prepared = prepare(profile, request, policy, now);
  const raw: Record<string, number> = { ...prepared.fixed, ...referenceAmountValues(prepared.terms, request.amount) };
  return Object.fromEntries(SIGNAL_NAMES.map((n) => [n, Number.isFinite(raw[n]) ? round4(raw[n]!) : 0])) as Record<
    SignalName,
    number
  >;
}

const clip = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x));

/**
 * The amount signals from the docs' table. The excess is how many standard deviations ln(amount)
 * lies beyond the history's mean and the free first σ; for a clean entity never more than
 * ln(amount / tier limit) / std (an amount within the limit costs nothing); without a history, the
 * excess over the tier limit alone (0 without a reference amount), and amount_vs_history at least
 * noHistoryValue for an entity with a warning sign. Each capped at the policy's amount cap.
 */
export function referenceAmountValues(t: Prepared['terms'], amount: number): Record<AmountSignal, number> {
  let excess = 0;
  if (amount > 0) {
    const overLimit = t.limit > 0 ? clip(Math.log(amount / t.limit) / t.std, 0, t.cap) : null;
    if (!t.hasHistory) excess = overLimit ?? 0;
    else {
      const own = clip((Math.log(amount) - t.logMean) / t.std - t.toleranceSigma, 0, t.cap);
      excess = t.clean && overLimit !== null ? Math.min(own, overLimit) : own;
    }
  }
  return {
    amount_vs_history: t.hasHistory || t.clean ? excess : Math.max(t.noHistoryValue, excess),
    cash_out_burst: Math.sqrt(excess * t.burst),
    new_counterparty_large_trade: t.newCounterparty ? excess : 0,
  };
}

/** The score the model gives the entity and context of `prepared` at `amount`, from the reference sum. */
export function referenceScoreAt(prepared: Prepared, policy: Policy, amount: number): number {
  const raw = { ...prepared.fixed, ...referenceAmountValues(prepared.terms, amount) };
  return referenceScoreFromSignals(policy.bias, referenceAssemble(raw, policy));
}

/**
 * ISO 4217 minor units of the fiat currencies the tests quote (the standard's table, not a
 * library's); the policy's crypto assets are quoted to 8 decimals (docs/decisions.md).
 */
const ISO_DIGITS: Readonly<Record<string, number>> = { USD: 2, EUR: 2, GBP: 2, NGN: 2, JPY: 0, XOF: 0, BHD: 3 };
function referenceDigits(currency: string, policy: Policy): number {
  if (policy.cryptoAssets.includes(currency)) return 8;
  const digits = ISO_DIGITS[currency];
  if (digits === undefined) throw new Error(`the reference does not know ${currency}'s minor unit`);
  return digits;
}

/** The grid ends at 2^51 minor units (docs/decisions.md, "safe_amount precision"). */
const LAST_UNIT = 2 ** 51;

/**
 * safe_amount by its definition, searched on the reference score over the whole grid: null when
 * no amount at all reaches `high` (the largest double stands for every amount: each amount signal
 * is non-decreasing and capped); 0 when one minor unit already does; the grid's last amount when
 * it is still below; else the unit k with k below and k + 1 not, by bisection (the score is
 * non-decreasing in the amount: a property test checks that on the same reference score).
 */
export function referenceSafeAmount(
  profile: EntityProfile,
  request: ScoreRequest,
  policy: Policy,
  now: number,
): number | null {
  const prepared = prepare(profile, request, policy, now);
  const scale = 10 ** referenceDigits(request.currency, policy);
  const below = (amount: number) => referenceScoreAt(prepared, policy, amount) < policy.thresholds.high;
  if (below(Number.MAX_VALUE)) return null;
  if (!below(1 / scale)) return 0;
  if (below(LAST_UNIT / scale)) return LAST_UNIT / scale;
  let lo = 1;
  let hi = LAST_UNIT;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (below(mid / scale)) lo = mid;
    else hi = mid;
  }
  return lo / scale;
}
