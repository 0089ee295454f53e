// The score's arithmetic (docs/api.md, "Trust scoring"): signal values → contributions → score →
// level. The one implementation: the live model (src/model/signal-model.ts), the shadow score stored with
// a decision, the backtest and the fit's reports all call `scoreValues`, so a replay from stored
// feature values gives the live score to the last floating-point bit (the same rounding, the same
// summation order). src/trust/safe-amount.ts re-sums the same terms, in the same order, built from
// `modelValue` and `bySize` here.
import { SIGNAL_NAMES, type Policy, type SignalName, type Thresholds } from './policy.ts';
import type { RiskLevel } from './types.ts';
import { effectiveWeight } from './shapes.ts';
import { pairName, pairValue, type PairName } from './pairs.ts';

/** What a score needs from a policy: shapes and pairs are optional (none: every signal linear, alone). */
export type ScoringPolicy = Pick<Policy, 'bias' | 'weights' | 'shapes' | 'pairs'>;

/** Signal values by name; a missing name counts as 0 (a stored feature vector, or the model's own). */
export type SignalValues = Partial<Record<SignalName, number>>;

/**
 * One term of the sum: a signal with a non-zero weight·value. For a shaped signal (shapes.ts) the
 * weight is its effective slope at the value, so weight·value is still the term summed.
 */
export interface Contribution {
  /** a signal, or a pair's term "a*b" (pairs.ts) */
  name: SignalName | PairName;
  value: number;
  weight: number;
}

/**
 * The value the model sums for a raw value: rounded to 4 decimals (so what is returned and
 * audited is exactly what was summed), non-finite or missing as 0, never -0. Rounding twice gives
 * the same number, so stored values may be raw or already rounded.
 */
export function modelValue(raw: number | undefined): number {
  if (raw === undefined || !Number.isFinite(raw)) return 0;
  return Math.round(raw * 1e4) / 1e4 + 0;
}

/** The sum's order: largest |weight·value| first, ties by name (a total order: names are unique). */
export function bySize(a: Contribution, b: Contribution): number {
  const diff = Math.abs(b.weight * b.value) - Math.abs(a.weight * a.value);
  return diff !== 0 ? diff : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** round(100 · σ(z)): the score for a summed log-odds z. */
export function logisticScore(z: number): number {
  return Math.round(100 / (1 + Math.exp(-z)));
}

/** The score for `bias` plus the contributions, summed in the order they are given. */
export function scoreFromSignals(bias: number, signals: readonly Pick<Contribution, 'weight' | 'value'>[]): number {
  let z = bias;
  for (const s of signals) z += s.weight * s.value;
  return logisticScore(z);
}

export function riskLevelFor(score: number, thresholds: Thresholds): RiskLevel {
  if (score >= thresholds.critical) return 'critical';
  if (score >= thresholds.high) return 'high';
  if (score >= thresholds.medium) return 'medium';
  return 'low';
}

/**
 * The weight summed for `name` at `value` (modelValue's): the policy's, or its shape's effective
 * slope there. A stored policy document older than a signal has no weight for it: it counts 0
 * (docs/decisions.md), never NaN.
 */
export function weightAt(policy: ScoringPolicy, name: SignalName, value: number): number {
  const weight = (policy.weights as Partial<Record<SignalName, number>>)[name] ?? 0;
  return effectiveWeight(weight, policy.shapes?.[name], value);
}

/**
 * A policy's score on signal values: the non-zero contributions (values as modelValue gives
 * them) in bySize order, and their sum's score. Live scoring, the shadow score and every replay.
 */
export function scoreValues(policy: ScoringPolicy, values: SignalValues): { signals: Contribution[]; score: number } {
  const signals: Contribution[] = [];
  for (const name of SIGNAL_NAMES) {
    const value = modelValue(values[name]);
    const weight = weightAt(policy, name, value);
    if (weight * value !== 0) signals.push({ name, value, weight });
  }
  // a pair's parts as the model sums them (modelValue), so a replay gives the live term
  for (const pair of policy.pairs ?? []) {
    const value = pairValue(modelValue(values[pair.signals[0]]), modelValue(values[pair.signals[1]]));
    if (pair.weight * value !== 0) signals.push({ name: pairName(pair), value, weight: pair.weight });
  }
  signals.sort(bySize);
  return { signals, score: scoreFromSignals(policy.bias, signals) };
}

/** scoreValues' score alone: a policy replayed on stored values. */
export function replayScore(policy: ScoringPolicy, values: SignalValues): number {
  return scoreValues(policy, values).score;
}

/** The summed log-odds z behind replayScore (the same terms in the same order): p = σ(z). */
export function replayLogOdds(policy: ScoringPolicy, values: SignalValues): number {
  let z = policy.bias;
  for (const s of scoreValues(policy, values).signals) z += s.weight * s.value;
  return z;
}
