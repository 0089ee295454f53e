// Replaying a policy on stored score decisions (docs/api.md, "Policies" backtest). A stored decision keeps the
// value of every signal, so any weights and bias can be replayed on it exactly: the replay is
// the live model's own arithmetic (arithmetic.ts, scoreValues), summation order included.
import { isDeepStrictEqual } from 'node:util';
import type { Policy, SignalName, Thresholds } from '../model/policy.ts';
import { newAccountsOf } from '../model/new-accounts.ts';
import { logisticScore, replayLogOdds, riskLevelFor } from '../model/arithmetic.ts';
import type { RiskLevel } from '../model/types.ts';
import type { FeatureRecord } from '../model/feature-vector.ts';
import { computeMetrics, type Label, type Metrics } from './metrics.ts';
import { levelFigures, type LevelFigure, type ScoredOutcome } from './operating.ts';
import { replayedOutcomes, type ReplayedMoney } from './cost-fit.ts';
import type { DeskOutcomes } from './desk-outcomes.ts';

/** The parts of a policy a replay needs. */
export interface ReplayPolicy {
  bias: number;
  weights: Record<SignalName, number>;
  /** shaped signals (shapes.ts); absent: every signal linear */
  shapes?: Policy['shapes'];
  thresholds: Thresholds;
  /** what the policy decides by (docs/api.md, "Decisions by money"); absent: the defaults */
  outcomes?: Policy['outcomes'];
  economics?: Policy['economics'];
  newAccounts?: Policy['newAccounts'];
}

export interface StoredDecision {
  /** every signal's value as stored with the decision; a missing name counts as 0 */
  features: FeatureRecord;
  label?: Label | null;
  /** the level the decision was given when it was made */
  riskLevel: RiskLevel;
  /** the request's amount and currency, when kept (money figures) */
  amount?: number | null;
  currency?: string | null;
}

const RISK_LEVELS: readonly RiskLevel[] = ['low', 'medium', 'high', 'critical'];

export interface BacktestResult {
  decisions: number;
  labelled: number;
  /** on the labelled decisions; null figures when a label is missing */
  metrics: Metrics;
  /** decided level → level under the replayed policy → count; every cell present */
  levels: Record<RiskLevel, Record<RiskLevel, number>>;
  /** per level under the replayed policy, on the labelled decisions: counts and money */
  thresholds: LevelFigure[];
  /** the desk's figures for the policy's decisions on the labelled decisions (cost-fit.ts, replayedOutcomes) */
  outcomes: DeskOutcomes;
}

const emptyMatrix = (): Record<RiskLevel, Record<RiskLevel, number>> =>
  Object.fromEntries(RISK_LEVELS.map((from) => [from, Object.fromEntries(RISK_LEVELS.map((to) => [to, 0]))])) as Record<
    RiskLevel,
    Record<RiskLevel, number>
  >;

/**
 * A backtest fed one decision at a time, so a caller streaming the store holds only the labelled
 * decisions' outcomes (score, label, money: one small object each, for the metrics and the level
 * figures), never the decisions themselves.
 */
export class BacktestTally {
  private readonly levels = emptyMatrix();
  private readonly outcomes: ScoredOutcome[] = [];
  private readonly money: ReplayedMoney[] = [];
  private count = 0;

  constructor(private readonly policy: ReplayPolicy) {}

  add(d: StoredDecision): void {
    this.count++;
    const z = replayLogOdds(this.policy, d.features);
    const score = logisticScore(z);
    const row = this.levels[d.riskLevel];
    if (row === undefined) throw new RangeError(`backtest: unknown decided risk level ${String(d.riskLevel)}`);
    row[riskLevelFor(score, this.policy.thresholds)]++;
    if (d.label === 0 || d.label === 1) {
      const money = { label: d.label, amount: d.amount ?? null, currency: d.currency ?? null };
      this.outcomes.push({ score, ...money });
      this.money.push({ z, ...money });
    }
  }

  result(): BacktestResult {
    const scores = this.outcomes.map((o) => o.score);
    const labels = this.outcomes.map((o) => o.label);
    return {
      decisions: this.count,
      labelled: this.outcomes.length,
      metrics: computeMetrics(scores, labels),
      levels: this.levels,
      thresholds: levelFigures(this.outcomes, this.policy.thresholds),
      outcomes: replayedOutcomes(this.policy, this.money),
    };
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
  'decayHalfLifeDays',
  'disputePrior',
  'paymentMethodRisk',
  'newAccountDays',
  'velocity',
  'amount',
  'linkedFlaggedCap',
  'maxIdentifierFanout',
  'newAccounts',
] as const satisfies readonly (keyof Policy)[];

/** Which FEATURE_PARAMETERS differ between two policies (empty: a replay is exact). */
export function featureParameterChanges(a: Policy, b: Policy): string[] {
  // a policy without newAccounts scores with the defaults (new-accounts.ts): compare what is used
  const used = (p: Policy, k: (typeof FEATURE_PARAMETERS)[number]) => (k === 'newAccounts' ? newAccountsOf(p) : p[k]);
  return FEATURE_PARAMETERS.filter((k) => !isDeepStrictEqual(used(a, k), used(b, k)));
}
