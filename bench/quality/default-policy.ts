// `npx tsx bench/quality/default-policy.ts --seeds 1,2,3`: the built-in policy as a desk sees it
// (issue 20, item 2), on the simulated market's ground truth, per seed: frauds caught and
// legitimate trades flagged at `high`+, the best strict cuts (caught at ≤ 1 % / ≤ 2 % of legitimate
// trades flagged), ROC-AUC, the share of scores at 98 or more (a pile-up at the top makes a small
// review budget impossible) and recall at `high`+ per fraud population. No fit: the hand-set
// policy scores every request at its own time (bench/quality/offline.ts).
import { parseArgs } from 'node:util';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import { computeMetrics } from '../../src/policies/metrics.ts';
import { FRAUD_POPULATIONS } from './world.ts';
import { operatingFigures } from './figures.ts';
import { simulateMarket } from './market.ts';
import { scoreOffline } from './offline.ts';

const { values: args } = parseArgs({
  options: {
    seeds: { type: 'string', default: '1,2,3' },
    entities: { type: 'string', default: '2000' },
    days: { type: 'string', default: '90' },
  },
});

const r4 = (x: number) => Number(x.toFixed(4));

for (const seed of args.seeds.split(',').map(Number)) {
  const market = simulateMarket({ seed, entities: Number(args.entities), days: Number(args.days) });
  const decisions = scoreOffline(market.events, market.requests, DEFAULT_POLICY);
  const scores = decisions.map((d) => d.score);
  const labels = decisions.map((d) => (d.request.label === 'fraud' ? 1 : 0) as 0 | 1);
  const high = DEFAULT_POLICY.thresholds.high;
  const byPopulation: Record<string, string> = {};
  for (const population of FRAUD_POPULATIONS) {
    const fraud = decisions.filter((d) => d.request.population === population && d.request.label === 'fraud');
    byPopulation[population] = `${fraud.filter((d) => d.score >= high).length}/${fraud.length}`;
  }
  console.log(
    JSON.stringify({
      seed,
      policy: DEFAULT_POLICY.version,
      requests: decisions.length,
      fraud: labels.filter((y) => y === 1).length,
      roc_auc: r4(computeMetrics(scores, labels).roc_auc ?? 0),
      ...operatingFigures(scores, labels, DEFAULT_POLICY.thresholds),
      share_at_98_or_more: r4(scores.filter((s) => s >= 98).length / Math.max(1, scores.length)),
      recall_high_plus_by_population: byPopulation,
    }),
  );
}
