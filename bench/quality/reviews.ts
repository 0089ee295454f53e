// `npx tsx bench/quality/reviews.ts --seeds 1,2,3`: a fit on review labels only, with and without review_sample_rate
// (issue 31, "Measure"; docs/learning.md, "Labels from reviews"). Offline on the simulated market
// (bench/quality/offline.ts), no HTTP: the built-in policy scores every request at its own time and its outcome map
// decides (low/medium approve, high review, critical decline). A desk works the reviews of half A's entities: every
// `review` outcome, plus at rate r a share of the approvals (reason 'sample'), each resolved by a simulated reviewer
// who gives the true label 95 % of the time. After 1, 2 and 4 weeks a candidate is fitted with fitCandidate on those
// review labels alone, each turned into a training example by the fit's own trainingExample (so sampled approvals weigh
// 1/r, which the fit puts in the bias alone: src/policies/intercept.ts); it is replayed on every decision of half B
// (entities no fit saw) against the ground truth: ROC-AUC and the frauds caught at the best cut flagging ≤ 2 % of
// legitimate trades; and its calibration error (does score/100 read as the fraud rate?). For scale: the hand-set
// policy, and a fit on the truth of every half-A decision of the same weeks (what a desk labelling everything would
// give). Also `fully weighted`: the weights 1/r in every parameter of the fit (the estimator before the two stages),
// and `weighting off`: the same sampled labels with weight 1, to show what the estimator itself does. The reviewer's
// verdicts and the sampling draws come from their own seeded streams, one value per decision, so every rate sees the
// same verdicts and a higher rate samples a superset. Options: --seeds 1,2,3 --entities N --days N (the first third
// builds history) --rates 0,0.02 --weeks 1,2,4 --accuracy 0.95 --json (one JSON line per seed, no table)
import { parseArgs } from 'node:util';
import { DEFAULT_POLICY, type Policy } from '../../src/model/policy.ts';
import { computeMetrics, type Label } from '../../src/policies/metrics.ts';
import { fitCandidate, type CandidateOptions, type LabelledDecision } from '../../src/policies/report.ts';
import { InsufficientLabelsError } from '../../src/policies/fit.ts';
import { LEFT_OUT, trainingExample } from '../../src/policies/labels.ts';
import { outcomesOf } from '../../src/model/outcome-policy.ts';
import { replayScore } from '../../src/model/arithmetic.ts';
import { entityFraction } from '../../src/policies/split.ts';
import { simulateMarket } from './market.ts';
import { scoreOffline, type OfflineDecision } from './offline.ts';
import { operatingFigures } from './figures.ts';
import { mulberry32 } from './prng.ts';

const { values: args } = parseArgs({
  options: {
    seeds: { type: 'string', default: '1,2,3' },
    entities: { type: 'string', default: '8000' },
    days: { type: 'string', default: '45' },
    rates: { type: 'string', default: '0,0.02' },
    weeks: { type: 'string', default: '1,2,4' },
    accuracy: { type: 'string', default: '0.95' },
    json: { type: 'boolean', default: false },
  },
});

const WEEK = 7 * 86_400_000;
const rates = args.rates.split(',').map(Number);
const weeks = args.weeks.split(',').map(Number);
const accuracy = Number(args.accuracy);
const half = (entity: string) => entityFraction(entity, 'vouch-quality-halves') < 0.5;

interface Figures {
  roc_auc: number;
  caught_at_2pct_fpr: number;
  calibration_error: number;
  labels?: { fraud: number; legit: number; sampled: number };
}

function measure(policy: Policy, heldOut: readonly OfflineDecision[], truth: readonly Label[]): Figures {
  const scores = heldOut.map((d) => replayScore(policy, d.features));
  const metrics = computeMetrics(scores, truth);
  return {
    roc_auc: metrics.roc_auc ?? Number.NaN,
    calibration_error: metrics.calibration_error ?? Number.NaN,
    caught_at_2pct_fpr: operatingFigures(scores, truth, policy.thresholds).caught_at_fpr['0.02'],
  };
}

/** A candidate fitted on `labelled` and measured on the held-out half; null when the labels cannot support a fit. */
function fitAndMeasure(
  labelled: LabelledDecision[],
  version: string,
  heldOut: readonly OfflineDecision[],
  truth: readonly Label[],
  weighting?: CandidateOptions['weighting'],
): Figures | null {
  try {
    const { policy } = fitCandidate(labelled, DEFAULT_POLICY, { version, weighting });
    const fraud = labelled.filter((l) => l.label === 1).length;
    return {
      ...measure(policy, heldOut, truth),
      labels: { fraud, legit: labelled.length - fraud, sampled: labelled.filter((l) => l.sampled).length },
    };
  } catch (err) {
    if (err instanceof InsufficientLabelsError) return null;
    throw err;
  }
}

/** The review labels a desk has after `until`, as the fit's trainingExample weighs them at rate `rate`. */
function reviewLabels(
  desk: readonly OfflineDecision[],
  until: number,
  rate: number,
  verdictU: Float64Array,
  sampleU: Float64Array,
  weighted: boolean,
): LabelledDecision[] {
  const outcomes = outcomesOf(DEFAULT_POLICY);
  const out: LabelledDecision[] = [];
  desk.forEach((d, i) => {
    if (d.at >= until) return;
    const outcome = outcomes[d.riskLevel];
    const opened =
      outcome === 'review' || outcome === 'hold'
        ? 'outcome'
        : outcome === 'approve' && sampleU[i]! < rate
          ? 'sample'
          : null;
    if (opened === null) return;
    const truth = d.request.label;
    const verdict = verdictU[i]! < accuracy ? truth : truth === 'fraud' ? 'legit' : 'fraud';
    const example = trainingExample(
      {
        createdAt: d.at,
        entityId: d.entityId,
        tradeId: d.tradeId,
        label: verdict,
        labelSource: 'review',
        outcome,
        review: {
          reason: opened,
          sampleRate: opened === 'sample' ? rate : null,
          resolution: verdict === 'fraud' ? 'decline' : 'approve',
        },
        samplingRate: rate > 0 ? rate : null,
      },
      { now: until, completed: () => false },
    );
    if (example === null || example === LEFT_OUT) return;
    out.push({ entityId: d.entityId, features: d.features, ...example, weight: weighted ? example.weight : 1 });
  });
  return out;
}

type Row = Record<string, Figures | null>;
const results: { seed: number; rows: Record<number, Row> }[] = [];

for (const seed of args.seeds.split(',').map(Number)) {
  const days = Number(args.days);
  const market = simulateMarket({ seed, entities: Number(args.entities), days, warmupDays: days / 3 });
  const decisions = scoreOffline(market.events, market.requests, DEFAULT_POLICY);
  const desk = decisions.filter((d) => half(d.entityId));
  const heldOut = decisions.filter((d) => !half(d.entityId));
  const truth = heldOut.map((d) => (d.request.label === 'fraud' ? 1 : 0) as Label);
  const verdicts = mulberry32(seed * 7919 + 1);
  const draws = mulberry32(seed * 104_729 + 2);
  const verdictU = Float64Array.from(desk, () => verdicts());
  const sampleU = Float64Array.from(desk, () => draws());
  const from = Date.parse(market.requestsFrom);
  const rows: Record<number, Row> = {};
  for (const week of weeks) {
    const until = from + week * WEEK;
    const row: Row = { hand_set: measure(DEFAULT_POLICY, heldOut, truth) };
    for (const rate of rates) {
      const weighted = reviewLabels(desk, until, rate, verdictU, sampleU, true);
      row[`rate ${rate}`] = fitAndMeasure(weighted, `reviews-${seed}-${week}-${rate}`, heldOut, truth);
      if (rate > 0)
        row[`rate ${rate}, fully weighted`] = fitAndMeasure(
          weighted,
          `full-${seed}-${week}-${rate}`,
          heldOut,
          truth,
          'full',
        );
      if (rate > 0)
        row[`rate ${rate}, weighting off`] = fitAndMeasure(
          reviewLabels(desk, until, rate, verdictU, sampleU, false),
          `unweighted-${seed}-${week}-${rate}`,
          heldOut,
          truth,
        );
    }
    const everything = desk
      .filter((d) => d.at < until)
      .map((d) => ({
        entityId: d.entityId,
        features: d.features,
        label: (d.request.label === 'fraud' ? 1 : 0) as Label,
      }));
    row['all truth'] = fitAndMeasure(everything, `truth-${seed}-${week}`, heldOut, truth);
    rows[week] = row;
  }
  results.push({ seed, rows });
  if (args.json)
    console.log(
      JSON.stringify({
        seed,
        requests: decisions.length,
        held_out: { decisions: heldOut.length, fraud: truth.filter((y) => y === 1).length },
        weeks: rows,
      }),
    );
  else
    console.error(
      `seed ${seed}: ${decisions.length} decisions, held-out half ${heldOut.length} (${truth.filter((y) => y === 1).length} fraud)`,
    );
}

if (!args.json) {
  const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
  const sd = (xs: number[]) => Math.sqrt(xs.reduce((a, x) => a + (x - mean(xs)) ** 2, 0) / Math.max(1, xs.length - 1));
  const cell = (xs: number[], digits: number, scale = 1) =>
    xs.length === 0
      ? '—'
      : `${(mean(xs) * scale).toFixed(digits)} ± ${(sd(xs) * scale).toFixed(digits)} (${(Math.min(...xs) * scale).toFixed(digits)}–${(Math.max(...xs) * scale).toFixed(digits)})`;
  const names = Object.keys(results[0]!.rows[weeks[0]!]!);
  console.log(
    `| weeks | labels | fraud / legit labels (sampled) | ROC-AUC, held-out half | caught at ≤ 2 % FP (%) | calibration error | fits |`,
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const week of weeks) {
    for (const name of names) {
      const got = results.map((r) => r.rows[week]![name]).filter((f): f is Figures => f !== null);
      const labels =
        got.length > 0 && got[0]!.labels
          ? `${Math.round(mean(got.map((f) => f.labels!.fraud)))} / ${Math.round(mean(got.map((f) => f.labels!.legit)))} (${Math.round(mean(got.map((f) => f.labels!.sampled)))})`
          : '';
      console.log(
        `| ${week} | ${name} | ${labels} | ${cell(
          got.map((f) => f.roc_auc),
          3,
        )} | ${cell(
          got.map((f) => f.caught_at_2pct_fpr),
          1,
          100,
        )} | ${cell(
          got.map((f) => f.calibration_error),
          3,
        )} | ${got.length}/${results.length} |`,
      );
    }
  }
  console.log(
    `\nmean ± sd (min–max) over seeds ${args.seeds}; ${args.entities} entities, ${args.days} days, reviewer right ${accuracy * 100} % of the time.`,
  );
}
