// `npx tsx bench/quality/desk.ts --seeds 1,2,3` (npm run quality:desk): the desk's view of three ways to decide
// (issue 39, docs/benchmarks.md "Decisions by money"), offline on the simulated market (bench/quality/offline.ts).
// The built-in policy scores every request at its own time; half A's entities are the fit's history, every decision
// labelled with its truth (as the HTTP run's --labels api); half B's (entities no fit saw) are where the decisions
// are judged, against the ground truth, by the service's own desk figures (src/policies/desk-outcomes.ts):
//   hand-set   the built-in policy and its level → outcome map (high → review, critical → decline)
//   target     a fit whose `high` flags at most 2 % of honest trades, the same map
//   cost       a fit with the cost objective: decisions by money with the economics below, reviewGainMin set on
//              half A's train side for a capacity of 100 reviews per 1,000 decisions
// Economics: loss 1, decline 1 % + 20 USD, review 3 USD, reviewer right 95 % of the time. Every figure is after
// review (a review catches a fraud, or clears an honest trade, 95 % of the time) except "not approved" and
// "declined outright". Options: --seeds 1,2,3 --entities N --days N --capacity R (reviews per 1,000) --json
// --mix '{"honest":0.6,"sloppy":0.2,…}' (the populations' shares: a harder market than the default)
import { parseArgs } from 'node:util';
import { DEFAULT_POLICY, type Policy } from '../../src/model/policy.ts';
import { replayLogOdds } from '../../src/model/arithmetic.ts';
import { costModelOf, inCostCurrency, type Economics } from '../../src/model/economics.ts';
import { newAccountsOf } from '../../src/model/new-accounts.ts';
import { computeMetrics } from '../../src/policies/metrics.ts';
import { fitCandidate, type LabelledDecision } from '../../src/policies/report.ts';
import { byLevel, byMoney, deskOutcomes, type DeskOutcomes, type DeskRow } from '../../src/policies/desk-outcomes.ts';
import { entityFraction } from '../../src/policies/split.ts';
import { simulateMarket } from './market.ts';
import { scoreOffline, type OfflineDecision } from './offline.ts';

const { values: args } = parseArgs({
  options: {
    seeds: { type: 'string', default: '1,2,3' },
    entities: { type: 'string', default: '2000' },
    days: { type: 'string', default: '90' },
    capacity: { type: 'string', default: '100' },
    /** the populations' shares as JSON (bench/quality/market.ts DEFAULT_MIX), e.g. a harder market */
    mix: { type: 'string' },
    json: { type: 'boolean', default: false },
    /** --no-pairs: the cost fit without its search for pairwise terms */
    'no-pairs': { type: 'boolean', default: false },
  },
});

const ECONOMICS: Economics = {
  currency: 'USD',
  lossRate: 1,
  declineCost: { rate: 0.01, fixed: 20 },
  reviewCost: 3,
  reviewerAccuracy: 0.95,
};
const DAY = 86_400_000;

type Way = 'hand-set' | 'target' | 'cost';
interface SeedResult {
  seed: number;
  judged: number;
  fraud: number;
  roc_auc: Record<Way, number | null>;
  outcomes: Record<Way, DeskOutcomes>;
  review_gain_min: number;
  /** the pairs the cost fit tried and kept (docs/signals.md, "Pairs") */
  pairs: unknown;
}

function rowsOf(decisions: readonly OfflineDecision[], policy: Policy): DeskRow[] {
  const model = costModelOf(ECONOMICS);
  const reference = newAccountsOf(policy).referenceAmounts;
  return decisions.map((d) => ({
    z: replayLogOdds(policy, d.features),
    label: d.request.label === 'fraud' ? 1 : 0,
    weight: 1,
    amount: inCostCurrency(d.request.body.amount, d.request.body.currency, model, reference),
  }));
}

function runSeed(seed: number): SeedResult {
  const market = simulateMarket({
    seed,
    entities: Number(args.entities),
    days: Number(args.days),
    ...(args.mix ? { mix: JSON.parse(args.mix) as Record<string, number> } : {}),
  });
  const decisions = scoreOffline(market.events, market.requests);
  const inA = (d: OfflineDecision) => entityFraction(d.entityId, 'vouch-quality-halves') < 0.5;
  const history = decisions.filter(inA);
  const judged = decisions.filter((d) => !inA(d));
  const labelled: LabelledDecision[] = history.map((d) => ({
    entityId: d.entityId,
    features: d.features,
    label: d.request.label === 'fraud' ? 1 : 0,
    amount: d.request.body.amount,
    currency: d.request.body.currency,
  }));
  const span = Math.max(1, (history[history.length - 1]!.at - history[0]!.at) / DAY);
  const decisionsPerDay = history.length / span;
  const economics = { ...ECONOMICS, reviewsPerDay: (Number(args.capacity) / 1000) * decisionsPerDay };
  const target = fitCandidate(labelled, DEFAULT_POLICY, {
    version: `target-${seed}`,
    target: { level: 'high', max_false_positive_rate: 0.02 },
  }).policy;
  const costFit = fitCandidate(labelled, DEFAULT_POLICY, {
    version: `cost-${seed}`,
    cost: { economics, decisionsPerDay },
    pairs: !args['no-pairs'],
  });
  const cost = costFit.policy;
  const model = costModelOf(cost.economics!);
  const ways: Record<Way, { policy: Policy; decide: ReturnType<typeof byLevel> }> = {
    'hand-set': { policy: DEFAULT_POLICY, decide: byLevel(DEFAULT_POLICY) },
    target: { policy: target, decide: byLevel(target) },
    cost: { policy: cost, decide: byMoney(model, byLevel(cost)) },
  };
  const truth = judged.map((d) => (d.request.label === 'fraud' ? 1 : 0) as 0 | 1);
  const result = { seed, judged: judged.length, fraud: truth.filter((y) => y === 1).length } as SeedResult;
  result.roc_auc = {} as SeedResult['roc_auc'];
  result.outcomes = {} as SeedResult['outcomes'];
  for (const [way, { policy, decide }] of Object.entries(ways) as [Way, (typeof ways)[Way]][]) {
    const rows = rowsOf(judged, policy);
    result.roc_auc[way] = computeMetrics(
      rows.map((r) => 100 / (1 + Math.exp(-r.z))),
      truth,
    ).roc_auc;
    result.outcomes[way] = deskOutcomes(rows, decide, costModelOf(ECONOMICS));
  }
  result.review_gain_min = model.reviewGainMin;
  result.pairs = costFit.report.pairs?.search ?? null;
  return result;
}

const seeds = args.seeds.split(',').map(Number);
const results = seeds.map(runSeed);
if (args.json) {
  for (const r of results) console.log(JSON.stringify(r));
} else {
  for (const r of results) console.log(`seed ${r.seed} pairs: ${JSON.stringify(r.pairs)}`);
  const pct = (x: number | null) => (x === null ? '—' : `${(x * 100).toFixed(1)} %`);
  const columns: Array<[string, (o: DeskOutcomes) => string]> = [
    ['stopped', (o) => pct(o.stopped_fraud)],
    ['honest not approved', (o) => pct(o.legit_not_approved)],
    ['honest declined', (o) => pct(o.legit_declined)],
    ['honest friction', (o) => pct(o.legit_friction)],
    ['fraud money passed', (o) => pct(o.fraud_money_passed)],
    ['reviews/1k', (o) => String(o.reviews_per_1k)],
    ['decline precision', (o) => (o.decline_precision === null ? '—' : o.decline_precision.toFixed(2))],
    ['cost/decision', (o) => (o.expected_cost === null ? '—' : o.expected_cost.toFixed(2))],
  ];
  console.log(`| seed | way | ROC-AUC | ${columns.map(([c]) => c).join(' | ')} |`);
  console.log(`|${'---|'.repeat(columns.length + 3)}`);
  for (const r of results)
    for (const way of ['hand-set', 'target', 'cost'] as const)
      console.log(
        `| ${r.seed} | ${way} | ${r.roc_auc[way]?.toFixed(4)} | ${columns.map(([, f]) => f(r.outcomes[way])).join(' | ')} |`,
      );
  const stats = (xs: number[]) => {
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
    const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, xs.length - 1));
    return { mean, sd };
  };
  console.log(`\nmean ± sd over seeds ${seeds.join(', ')}:`);
  const keys = [
    'stopped_fraud',
    'legit_not_approved',
    'legit_declined',
    'legit_friction',
    'fraud_money_passed',
    'reviews_per_1k',
    'decline_precision',
    'expected_cost',
  ] as const;
  console.log(`| way | ${keys.join(' | ')} |`);
  console.log(`|${'---|'.repeat(keys.length + 1)}`);
  for (const way of ['hand-set', 'target', 'cost'] as const) {
    const cells = keys.map((k) => {
      const { mean, sd } = stats(results.map((r) => r.outcomes[way][k] ?? Number.NaN));
      const scale = k === 'reviews_per_1k' || k === 'expected_cost' || k === 'decline_precision' ? 1 : 100;
      return `${(mean * scale).toFixed(scale === 1 ? 2 : 1)} ± ${(sd * scale).toFixed(scale === 1 ? 2 : 1)}`;
    });
    console.log(`| ${way} | ${cells.join(' | ')} |`);
  }
}
