// Operating points (docs/api.md, "Policies"): what each risk level flags on labelled decisions,
// in counts and in money, and the level thresholds that meet a desk's target on a fit's holdout.
// Pure: the fit (report.ts) and the backtest (backtest.ts) feed it scores, labels and amounts.
import type { Thresholds } from '../model/policy.ts';
import type { Label } from './metrics.ts';
import type { RiskLevel } from '../model/types.ts';

/** One labelled, scored decision; amount and currency when the decision kept its request. */
export interface ScoredOutcome {
  score: number;
  label: Label;
  amount?: number | null;
  currency?: string | null;
}

export interface LevelFigure {
  risk_level: RiskLevel;
  min_score: number;
  /** decisions with score ≥ min_score */
  flagged: number;
  share_flagged: number | null;
  /** frauds among them, and their share of all frauds (recall) */
  frauds_caught: number;
  recall: number | null;
  /** legitimate decisions flagged, and their share of all legitimate ones */
  false_positives: number;
  false_positive_rate: number | null;
  precision: number | null;
  /** per currency: fraud volume flagged (caught) and legitimate volume flagged (held) */
  volume_caught: Record<string, number>;
  volume_held: Record<string, number>;
}

type TargetLevel = 'high' | 'critical';

/** A desk's target for one level; exactly one of the three limits. */
export interface OperatingTarget {
  level: TargetLevel;
  max_false_positive_rate?: number;
  max_share_flagged?: number;
  min_precision?: number;
}

export interface TargetOutcome {
  target: OperatingTarget;
  /** how the target was chosen: the request's, or the default (the base policy's share flagged) */
  source: 'request' | 'default';
  met: boolean;
  min_score: number;
}

const LEVELS: readonly RiskLevel[] = ['low', 'medium', 'high', 'critical'];
const round2 = (x: number): number => Math.round(x * 100) / 100;

/** Counts at every integer cut 0–101: cumulative from the top, so each level's figure is a lookup. */
class Cuts {
  readonly flagged = new Array<number>(102).fill(0);
  readonly caught = new Array<number>(102).fill(0);
  readonly total: number;
  readonly frauds: number;
  constructor(outcomes: readonly ScoredOutcome[]) {
    for (const o of outcomes) {
      const s = Math.min(100, Math.max(0, Math.round(o.score)));
      this.flagged[s]!++;
      this.caught[s]! += o.label;
    }
    for (let s = 99; s >= 0; s--) {
      this.flagged[s]! += this.flagged[s + 1]!;
      this.caught[s]! += this.caught[s + 1]!;
    }
    this.total = this.flagged[0]!;
    this.frauds = this.caught[0]!;
  }
  share(cut: number): number | null {
    return this.total > 0 ? this.flagged[cut]! / this.total : null;
  }
  fpr(cut: number): number | null {
    const legit = this.total - this.frauds;
    return legit > 0 ? (this.flagged[cut]! - this.caught[cut]!) / legit : null;
  }
  precision(cut: number): number | null {
    return this.flagged[cut]! > 0 ? this.caught[cut]! / this.flagged[cut]! : null;
  }
}

/** Per level: what flagging every decision at or above its minimum score catches and holds. */
export function levelFigures(outcomes: readonly ScoredOutcome[], thresholds: Thresholds): LevelFigure[] {
  const cuts = new Cuts(outcomes);
  const mins: Record<RiskLevel, number> = {
    low: 0,
    medium: thresholds.medium,
    high: thresholds.high,
    critical: thresholds.critical,
  };
  return LEVELS.map((risk_level) => {
    const min = mins[risk_level];
    const volume_caught: Record<string, number> = {};
    const volume_held: Record<string, number> = {};
    for (const o of outcomes) {
      if (o.score < min || typeof o.currency !== 'string' || typeof o.amount !== 'number' || !Number.isFinite(o.amount))
        continue;
      const into = o.label === 1 ? volume_caught : volume_held;
      into[o.currency] = (into[o.currency] ?? 0) + o.amount;
    }
    for (const m of [volume_caught, volume_held]) for (const k of Object.keys(m)) m[k] = round2(m[k]!);
    const flagged = cuts.flagged[min]!;
    const caught = cuts.caught[min]!;
    return {
      risk_level,
      min_score: min,
      flagged,
      share_flagged: cuts.share(min),
      frauds_caught: caught,
      recall: cuts.frauds > 0 ? caught / cuts.frauds : null,
      false_positives: flagged - caught,
      false_positive_rate: cuts.fpr(min),
      precision: cuts.precision(min),
      volume_caught,
      volume_held,
    };
  });
}

/** The share of `outcomes` scoring at or above `cut` (0 when there are none). */
export function shareAtOrAbove(scores: readonly number[], cut: number): number {
  if (scores.length === 0) return 0;
  let n = 0;
  for (const s of scores) if (s >= cut) n++;
  return n / scores.length;
}

/**
 * The lowest integer cut (most frauds caught) in [lo, hi] that meets the target on `outcomes`;
 * when none does, the cut that comes closest (the highest for a ceiling on flags, the most precise
 * for a precision floor), reported as not met.
 */
export function cutForTarget(
  outcomes: readonly ScoredOutcome[],
  target: OperatingTarget,
  lo = 1,
  hi = 99,
): { cut: number; met: boolean } {
  const cuts = new Cuts(outcomes);
  const meets = (c: number): boolean => {
    if (target.max_false_positive_rate !== undefined) return (cuts.fpr(c) ?? 0) <= target.max_false_positive_rate;
    if (target.max_share_flagged !== undefined) return (cuts.share(c) ?? 0) <= target.max_share_flagged;
    if (target.min_precision !== undefined) {
      const p = cuts.precision(c);
      return p !== null && p >= target.min_precision;
    }
    throw new RangeError(
      'operating target: one of max_false_positive_rate, max_share_flagged, min_precision is required',
    );
  };
  for (let c = lo; c <= hi; c++) if (meets(c)) return { cut: c, met: true };
  if (target.min_precision === undefined) return { cut: hi, met: false };
  let best = hi;
  for (let c = lo; c <= hi; c++) if ((cuts.precision(c) ?? -1) > (cuts.precision(best) ?? -1)) best = c;
  return { cut: best, met: false };
}

/**
 * The fewest score points between two levels a fit may set. Matching the base policy's shares on a
 * candidate whose scores bunch up can put two cuts on neighbouring points (30/60/85 became
 * 6/36/37, issue 29): a level one point wide is no level a desk can act on.
 */
export const MIN_LEVEL_GAP = 5;

/**
 * The candidate's thresholds: the target level's cut from the target; the other levels keep the
 * share of decisions the base policy gives them on the same outcomes, then are pushed apart to keep
 * medium < high < critical at least MIN_LEVEL_GAP points apart, within 1–99.
 */
export function thresholdsForTarget(
  candidate: readonly ScoredOutcome[],
  baseScores: readonly number[],
  base: Thresholds,
  target: OperatingTarget,
): { thresholds: Thresholds; met: boolean } {
  const gap = MIN_LEVEL_GAP;
  const shareOf = (cut: number) => shareAtOrAbove(baseScores, cut);
  const sameShare = (cut: number) => cutForTarget(candidate, { level: 'high', max_share_flagged: shareOf(cut) }).cut;
  // The target's cut leaves room for the levels on either side of it.
  const chosen =
    target.level === 'high'
      ? cutForTarget(candidate, target, 1 + gap, 99 - gap)
      : cutForTarget(candidate, target, 1 + 2 * gap, 99);
  let { medium, high, critical } = {
    medium: sameShare(base.medium),
    high: sameShare(base.high),
    critical: sameShare(base.critical),
  };
  if (target.level === 'high') {
    high = chosen.cut;
    critical = Math.min(Math.max(critical, high + gap), 99);
  } else {
    critical = chosen.cut;
    high = Math.max(Math.min(high, critical - gap), 1 + gap);
  }
  medium = Math.min(Math.max(medium, 1), high - gap);
  return { thresholds: { medium, high, critical }, met: chosen.met };
}

/** The operating point of one policy on a sample of decisions: its share flagged `high` or above. */
interface OperatingSide {
  version: string;
  high: number;
  share_flagged_high: number;
}

export interface OperatingMove {
  /** decisions replayed (the most recent score decisions of the environment) */
  decisions: number;
  before: OperatingSide;
  after: OperatingSide;
  /** after − before, in share (0.03 = 3 percentage points) */
  change: number;
  /** whether activating needs confirmation (MOVE_LIMITS) */
  exceeds: boolean;
}

/**
 * When an activation asks for confirmation (docs/decisions.md): the share of recent decisions the
 * policy flags `high`+ moves by more than 2 percentage points, or by more than 25 % of itself
 * (and at least half a point, so that 0.1 % → 0.2 % of a quiet book does not count). Fewer than
 * `minDecisions` recent decisions say nothing about the workload, so they never ask.
 */
export const MOVE_LIMITS = { absolute: 0.02, relative: 0.25, relativeFloor: 0.005, minDecisions: 500 } as const;

export function operatingMove(
  before: { version: string; high: number; scores: readonly number[] },
  after: { version: string; high: number; scores: readonly number[] },
): OperatingMove {
  const b = shareAtOrAbove(before.scores, before.high);
  const a = shareAtOrAbove(after.scores, after.high);
  const change = a - b;
  const size = Math.abs(change);
  const n = Math.min(before.scores.length, after.scores.length);
  const exceeds =
    n >= MOVE_LIMITS.minDecisions &&
    (size > MOVE_LIMITS.absolute || (size > MOVE_LIMITS.relativeFloor && (b === 0 || size / b > MOVE_LIMITS.relative)));
  return {
    decisions: n,
    before: { version: before.version, high: before.high, share_flagged_high: b },
    after: { version: after.version, high: after.high, share_flagged_high: a },
    change,
    exceeds,
  };
}
