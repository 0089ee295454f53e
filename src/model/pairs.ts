// Pairwise terms a fit may learn (docs/signals.md, "Pairs"): a term weight·(a·b) on the product of
// two risk signals' values, as generalised additive models with interactions (GA²M, explainable
// boosting machines) add a few pairs where the data say a combination is worse than its parts. Each
// is a term of its own in the sum and in the explanation (named "a*b"), so the signals still add up
// to the score. Both parts are risk signals and the weight is ≥ 0, so the product never falls as
// either part grows: the monotonicity of docs/signals.md holds for any valid policy.
import { Type, type Static } from 'typebox';
import { SIGNAL_DIRECTIONS, type SignalName } from './signal-names.ts';

/** At most this many pairs a policy: a few terms an operator can read, and a bounded cost per score. */
export const MAX_PAIRS = 8;
const RISK_SIGNALS = (Object.keys(SIGNAL_DIRECTIONS) as SignalName[]).filter((n) => SIGNAL_DIRECTIONS[n] === 'risk');

// A union of the risk signals' literals; typed as one literal of SignalName, which is what it admits.
const RiskSignal = Type.Union(RISK_SIGNALS.map((n) => Type.Literal(n))) as unknown as ReturnType<
  typeof Type.Literal<SignalName>
>;

export const PairsSchema = Type.Array(
  Type.Object(
    {
      signals: Type.Tuple([RiskSignal, RiskSignal]),
      weight: Type.Number({ minimum: 0, maximum: 100 }),
    },
    { additionalProperties: false },
  ),
  { maxItems: MAX_PAIRS },
);
export type Pair = Static<typeof PairsSchema>[number];

/** "a*b": a pair's term in a score's signals */
export type PairName = `${string}*${string}`;

export const pairName = (pair: Pick<Pair, 'signals'>): PairName => `${pair.signals[0]}*${pair.signals[1]}`;
export const isPairName = (name: string): name is PairName => name.includes('*');

/** A pair's line in the explanation: both parts at once, which the fit found riskier than the parts alone. */
export function describePair(name: PairName): string {
  const [a, b] = name.split('*');
  return `${a} together with ${b}: a combination the policy's fit found riskier than the two apart`;
}

/**
 * The pair's value from its parts' values as the model sums them (rounded, so a stored feature
 * vector replays it exactly), each floored at 0, rounded to 4 decimals like every value.
 */
export function pairValue(a: number, b: number): number {
  return Math.round(Math.max(0, a) * Math.max(0, b) * 1e4) / 1e4 + 0;
}

/** What JSON Schema cannot say: two different signals, each pair once (in either order). */
export function pairProblems(pairs: readonly Pair[] | undefined): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  (pairs ?? []).forEach((p, i) => {
    const [a, b] = p.signals;
    if (a === b) problems.push(`/pairs/${i}/signals: must name two different signals`);
    const key = a < b ? `${a}*${b}` : `${b}*${a}`;
    if (seen.has(key)) problems.push(`/pairs/${i}/signals: the pair ${a} × ${b} is already listed`);
    seen.add(key);
  });
  return problems;
}
