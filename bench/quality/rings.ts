// `npx tsx bench/quality/rings.ts --seeds 1,2,3`: the ring signals' effect on the simulated market,
// offline (the in-memory history, bench/quality/offline.ts, which reads rings through the same
// capped plan as the store). Per seed, before (the built-in policy without the rings: its bias
// without the rings' −0.1, ring weights 0 and maxIdentifierFanout 1, so the fit cannot use them
// either) and after (the built-in policy): the hand-set policy scores every request; a candidate is
// fitted on half A's decisions labelled with their outcome (as `npm run quality` does through the
// API) and replayed on half B, entities the fit never saw. Both sides use the same halves, the same
// fit and the same operating-point rule (the fit's default: `high` flags the base's share).
// Reported on half B: ROC-AUC of both policies (of the integer scores, as the API reports it, and
// of the log-odds before rounding), the legitimate trades scored `high`+, and per population recall
// at `high`+ and false positives. The fitted policy's `high` cut is near 5, where one point moves
// some 60 legitimate trades, and one fraud scored 0 ties with some 9,000 legitimate ones (−0.002
// AUC): `cut` and the unrounded AUC show how much of a difference is that resolution (docs/signals.md, "Rings").
import { parseArgs } from 'node:util';
import { DEFAULT_POLICY, SIGNAL_NAMES, type Policy } from '../../src/model/policy.ts';
import { computeMetrics } from '../../src/policies/metrics.ts';
import { fitCandidate } from '../../src/policies/report.ts';
import { modelValue, replayScore } from '../../src/model/arithmetic.ts';
import { entityFraction } from '../../src/policies/split.ts';
import { simulateMarket } from './market.ts';
import { scoreOffline, type OfflineDecision } from './offline.ts';

const { values: args } = parseArgs({
  options: {
    seeds: { type: 'string', default: '1,2,3' },
    entities: { type: 'string', default: '1200' },
    days: { type: 'string', default: '60' },
  },
});

/** The bias move that came with the ring signals (2026-11-25.1: −1.6 → −1.7), undone for "before". */
const RINGS_BIAS_SHIFT = -0.1;
/** The built-in policy with the ring signals off, so a retune of the other weights moves both sides. */
const NO_RINGS: Policy = {
  ...DEFAULT_POLICY,
  version: `${DEFAULT_POLICY.version}-no-rings`,
  bias: DEFAULT_POLICY.bias - RINGS_BIAS_SHIFT,
  maxIdentifierFanout: 1,
  weights: { ...DEFAULT_POLICY.weights, ring_flagged_entities: 0, ring_size: 0 },
};
const half = (entity: string) => entityFraction(entity, 'vouch-quality-halves') < 0.5;

function segments(rows: Array<{ d: OfflineDecision; score: number }>, high: number) {
  const by: Record<string, string> = {};
  for (const population of ['mule', 'triangulation']) {
    const mine = rows.filter((r) => r.d.request.population === population);
    const fraud = mine.filter((r) => r.d.request.label === 'fraud');
    const legit = mine.filter((r) => r.d.request.label === 'legit');
    by[population] =
      `recall ${fraud.filter((r) => r.score >= high).length}/${fraud.length}, false positives ${legit.filter((r) => r.score >= high).length}/${legit.length}`;
  }
  const legit = rows.filter((r) => r.d.request.label === 'legit');
  const flagged = legit.filter((r) => r.score >= high).length;
  return {
    ...by,
    legit_flagged: `${flagged}/${legit.length} (${((100 * flagged) / Math.max(1, legit.length)).toFixed(2)}%)`,
  };
}

function evaluate(market: ReturnType<typeof simulateMarket>, base: Policy, seed: number) {
  const decisions = scoreOffline(market.events, market.requests, base);
  const seen = decisions.filter((d) => half(d.entityId));
  const unseen = decisions.filter((d) => !half(d.entityId));
  const labelled = seen.map((d) => ({
    entityId: d.entityId,
    features: d.features,
    label: (d.request.label === 'fraud' ? 1 : 0) as 0 | 1,
  }));
  const { policy: fitted } = fitCandidate(labelled, base, { version: `rings-${seed}` });
  const truth = unseen.map((d) => (d.request.label === 'fraud' ? 1 : 0) as 0 | 1);
  const fittedScores = unseen.map((d) => replayScore(fitted, d.features));
  const auc = (scores: number[]) => Number(computeMetrics(scores, truth).roc_auc?.toFixed(4));
  // computeMetrics ranks any numbers: the log-odds keep the order the integer score rounds away.
  const logOdds = (p: Policy) =>
    unseen.map((d) => SIGNAL_NAMES.reduce((z, n) => z + p.weights[n] * modelValue(d.features[n]), p.bias));
  return {
    roc_auc: { hand_set: auc(unseen.map((d) => d.score)), fitted: auc(fittedScores) },
    roc_auc_unrounded: { hand_set: auc(logOdds(base)), fitted: auc(logOdds(fitted)) },
    fitted_cut: fitted.thresholds.high,
    hand_set: segments(
      unseen.map((d) => ({ d, score: d.score })),
      base.thresholds.high,
    ),
    fitted: segments(
      unseen.map((d, i) => ({ d, score: fittedScores[i]! })),
      fitted.thresholds.high,
    ),
    fitted_ring_weights: {
      ring_flagged_entities: Number(fitted.weights.ring_flagged_entities.toFixed(3)),
      ring_size: Number(fitted.weights.ring_size.toFixed(3)),
    },
  };
}

for (const seed of args.seeds.split(',').map(Number)) {
  const market = simulateMarket({ seed, entities: Number(args.entities), days: Number(args.days) });
  console.log(
    JSON.stringify(
      {
        seed,
        requests: market.requests.length,
        before: evaluate(market, NO_RINGS, seed),
        after: evaluate(market, DEFAULT_POLICY, seed),
      },
      null,
      2,
    ),
  );
}
