// `npx tsx bench/quality/shapes.ts --seeds 1,2,3`: shaped signals against one slope per signal on the simulated market,
// offline (bench/quality/offline.ts), as rings.ts does for the ring signals. Per seed the built-in policy scores every
// request; two candidates are fitted on half A's decisions labelled with their outcome, both with the operating point
// {level: high, max_false_positive_rate: 0.02} set on their own holdout: `linear` (shapes off) and `shaped` (the fit's
// default). Both are replayed on half B, entities neither fit saw. Reported on half B: ROC-AUC (of the integer score,
// and of the log-odds before rounding), average precision, Brier score of the score read as a probability, frauds
// caught and legitimate trades flagged at `high`+ under each candidate's own thresholds, and frauds caught at the best
// cut flagging ≤ 2 % of legitimate trades.
import { parseArgs } from 'node:util';
import { DEFAULT_POLICY, SIGNAL_NAMES, type Policy } from '../../src/model/policy.ts';
import { computeMetrics, rocAuc } from '../../src/policies/metrics.ts';
import { fitCandidate } from '../../src/policies/report.ts';
import { replayScore, scoreValues } from '../../src/model/arithmetic.ts';
import { entityFraction } from '../../src/policies/split.ts';
import { simulateMarket } from './market.ts';
import { scoreOffline } from './offline.ts';
import { INTERACTIONS } from '../../src/model/features.ts';

const INTERACTION_NAMES = [...Object.keys(INTERACTIONS), 'young_account_reversible_method'] as (
  keyof typeof INTERACTIONS | 'young_account_reversible_method'
)[];

const { values: args } = parseArgs({
  options: {
    seeds: { type: 'string', default: '1,2,3' },
    entities: { type: 'string', default: '1200' },
    days: { type: 'string', default: '60' },
  },
});

const half = (entity: string) => entityFraction(entity, 'vouch-quality-halves') < 0.5;
const pct = (a: number, b: number) => Number(((100 * a) / Math.max(1, b)).toFixed(1));

/** Frauds caught (%) at the lowest cut that flags at most `fpr` of the legitimate trades. */
function caughtAtFpr(scores: readonly number[], truth: readonly (0 | 1)[], fpr: number): number {
  const legit = truth.filter((t) => t === 0).length;
  const fraud = truth.length - legit;
  for (let cut = 0; cut <= 101; cut++) {
    const flagged = scores.filter((s, i) => s >= cut && truth[i] === 0).length;
    if (flagged <= fpr * legit) return pct(scores.filter((s, i) => s >= cut && truth[i] === 1).length, fraud);
  }
  return 0;
}

const logOdds = (policy: Policy, f: Record<string, number>) =>
  scoreValues(policy, f).signals.reduce((z, s) => z + s.weight * s.value, policy.bias);

function measure(policy: Policy, features: readonly Record<string, number>[], truth: readonly (0 | 1)[]) {
  const scores = features.map((f) => replayScore(policy, f));
  const m = computeMetrics(scores, truth);
  const high = policy.thresholds.high;
  const fraud = truth.filter((t) => t === 1).length;
  const legit = truth.length - fraud;
  return {
    roc_auc: Number(m.roc_auc?.toFixed(4)),
    // the ranking before the score is rounded to an integer (ties at 0 and 100 cost the above)
    roc_auc_log_odds: Number(
      rocAuc(
        features.map((f) => logOdds(policy, f)),
        truth,
      )?.toFixed(4),
    ),
    average_precision: Number(m.average_precision?.toFixed(4)),
    brier: Number(m.brier?.toFixed(5)),
    high_threshold: high,
    caught_at_high_pct: pct(scores.filter((s, i) => s >= high && truth[i] === 1).length, fraud),
    legit_flagged_at_high_pct: pct(scores.filter((s, i) => s >= high && truth[i] === 0).length, legit),
    caught_at_2pct_fpr: caughtAtFpr(scores, truth, 0.02),
  };
}

for (const seed of args.seeds.split(',').map(Number)) {
  const market = simulateMarket({ seed, entities: Number(args.entities), days: Number(args.days) });
  const decisions = scoreOffline(market.events, market.requests, DEFAULT_POLICY);
  const seen = decisions.filter((d) => half(d.entityId));
  const unseen = decisions.filter((d) => !half(d.entityId));
  const labelled = seen.map((d) => ({
    entityId: d.entityId,
    features: d.features,
    label: (d.request.label === 'fraud' ? 1 : 0) as 0 | 1,
  }));
  const target = { level: 'high', max_false_positive_rate: 0.02 } as const;
  const started = performance.now();
  const linear = fitCandidate(labelled, DEFAULT_POLICY, { version: `linear-${seed}`, target, shapes: false }).policy;
  const linearMs = performance.now() - started;
  const shaped = fitCandidate(labelled, DEFAULT_POLICY, { version: `shaped-${seed}`, target }).policy;
  const shapedMs = performance.now() - linearMs - started;
  const truth = unseen.map((d) => (d.request.label === 'fraud' ? 1 : 0) as 0 | 1);
  const features = unseen.map((d) => d.features);
  console.log(
    JSON.stringify(
      {
        seed,
        requests: market.requests.length,
        half_b: { decisions: unseen.length, fraud: truth.filter((t) => t === 1).length },
        fit_ms: { linear: Math.round(linearMs), shaped: Math.round(shapedMs) },
        hand_set: measure(DEFAULT_POLICY, features, truth),
        linear: measure(linear, features, truth),
        shaped: measure(shaped, features, truth),
        interaction_weights: Object.fromEntries(
          INTERACTION_NAMES.map((n) => [n, { linear: linear.weights[n], shaped: shaped.weights[n] }]),
        ),
        shaped_signals: SIGNAL_NAMES.filter((n) => shaped.shapes?.[n]).map((n) => ({
          name: n,
          weight: shaped.weights[n],
          ...shaped.shapes![n],
        })),
      },
      null,
      2,
    ),
  );
}
