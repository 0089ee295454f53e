// Replaying a policy on stored score decisions (docs/api.md, "Policies" backtest). A stored decision keeps the
// value of every signal (§8), so any weights and bias can be replayed on it exactly: the replay
// builds the same signal list the live model would have returned (values rounded to 4 decimals,
// zero contributions left out, largest |contribution| first) and scores it with the model's own
// scoreFromSignals, so even the floating-point summation order is the live one.
import { isDeepStrictEqual } from 'node:util';
import { SIGNAL_NAMES, type Policy, type SignalName, type Thresholds } from './policy.ts';
import { riskLevelFor, scoreFromSignals } from '../trust/model.ts';
import type { RiskLevel, Signal } from '../trust/types.ts';
import { modelValue, type FeatureRecord } from './features.ts';
import { computeMetrics, type Label, type Metrics } from './metrics.ts';

/** The parts of a policy a replay needs. */
export interface ReplayPolicy {
  bias: number;
  weights: Record<SignalName, number>;
  thresholds: Thresholds;
}

export interface StoredDecision {
  /** every signal's value as stored with the decision; a missing name counts as 0 */
  features: FeatureRecord;
  label?: Label | null;
  /** the level the decision was given when it was made */
  riskLevel: RiskLevel;
}

const RISK_LEVELS: readonly RiskLevel[] = ['low', 'medium', 'high', 'critical'];

/** The signals the live model would return for these values under this policy, in its order. */
export function replaySignals(policy: Pick<ReplayPolicy, 'weights'>, features: FeatureRecord): Omit<Signal, 'description'>[] {
  const signals: Omit<Signal, 'description'>[] = [];
  for (const name of SIGNAL_NAMES) {
    const value = modelValue(features[name]);
    const weight = policy.weights[name];
    if (weight * value !== 0) signals.push({ name, value, weight });
  }
  // Must stay the comparator of computeSignals in src/trust/model.ts.
  return signals.sort((a, b) => {
    const diff = Math.abs(b.weight * b.value) - Math.abs(a.weight * a.value);
    return diff !== 0 ? diff : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  });
}

export function replayScore(policy: Pick<ReplayPolicy, 'bias' | 'weights'>, features: FeatureRecord): number {
  return scoreFromSignals(policy.bias, replaySignals(policy, features));
}

export interface BacktestResult {
  decisions: number;
  labelled: number;
  /** on the labelled decisions; null figures when a label is missing */
  metrics: Metrics;
  /** decided level → level under the replayed policy → count; every cell present */
  levels: Record<RiskLevel, Record<RiskLevel, number>>;
}

const emptyMatrix = (): Record<RiskLevel, Record<RiskLevel, number>> =>
  Object.fromEntries(RISK_LEVELS.map((from) => [from, Object.fromEntries(RISK_LEVELS.map((to) => [to, 0]))])) as Record<
    RiskLevel,
    Record<RiskLevel, number>
  >;

/**
 * A backtest fed one decision at a time, so a caller streaming the store holds only the labelled
 * scores (for the metrics), never the decisions themselves.
 */
export class BacktestTally {
  private readonly levels = emptyMatrix();
  private readonly scores: number[] = [];
  private readonly labels: Label[] = [];
  private count = 0;

  constructor(private readonly policy: ReplayPolicy) {}

  add(d: StoredDecision): void {
    this.count++;
    const score = replayScore(this.policy, d.features);
    const row = this.levels[d.riskLevel];
    if (row === undefined) throw new RangeError(`backtest: unknown decided risk level ${String(d.riskLevel)}`);
    row[riskLevelFor(score, this.policy.thresholds)]++;
    if (d.label === 0 || d.label === 1) {
      this.scores.push(score);
      this.labels.push(d.label);
    }
  }

  result(): BacktestResult {
    return { decisions: this.count, labelled: this.labels.length, metrics: computeMetrics(this.scores, this.labels), levels: this.levels };
  }
}

export function backtest(policy: ReplayPolicy, decisions: Iterable<StoredDecision>): BacktestResult {
  const tally = new BacktestTally(policy);
  for (const d of decisions) tally.add(d);
  return tally.result();
}

/**
 * The policy fields, other than weights, bias and thresholds, that shape the signal values
 * themselves. Stored values were computed with the deciding policy's settings, so a replay of a
 * policy that changes any of these is an approximation; the caller should say so.
 */
const FEATURE_PARAMETERS = [
  'decayHalfLifeDays', 'disputePrior', 'paymentMethodRisk', 'newAccountDays', 'velocity', 'amount', 'linkedFlaggedCap',
] as const satisfies readonly (keyof Policy)[];

/** Which FEATURE_PARAMETERS differ between two policies (empty: a replay is exact). */
export function featureParameterChanges(a: Policy, b: Policy): string[] {
  return FEATURE_PARAMETERS.filter((k) => !isDeepStrictEqual(a[k], b[k]));
}
