// `npx tsx bench/quality/run.ts`: the learning loop offline on a simulated market. Scores every
// request at its own time with the default policy (in-memory history), labels decisions as
// docs/api.md, "Outcomes and labels"/§9 would at the end of the period, fits a candidate and prints the §9 report with
// the default policy's figures against ground truth beside it.
// Options: --seed N --entities N --days N --assume-legit-after-days N --lambda X
//          --events FILE (also write the history as NDJSON for `vouch events import`)
//          --requests FILE (also write the labelled requests as NDJSON)
//          --compare-p2p (also score with issue 10's P2P features weighted 0: the policy before them)
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import { DEFAULT_POLICY, type Policy } from '../../src/model/policy.ts';
import { completionIndex, trainingLabel } from '../../src/policies/labels.ts';
import { computeMetrics } from '../../src/policies/metrics.ts';
import { fitCandidate, type LabelledDecision } from '../../src/policies/report.ts';
import { simulateMarket } from './market.ts';
import { scoreOffline } from './offline.ts';

const { values: args } = parseArgs({
  options: {
    seed: { type: 'string', default: '1' },
    entities: { type: 'string', default: '2000' },
    days: { type: 'string', default: '90' },
    'assume-legit-after-days': { type: 'string', default: '30' },
    lambda: { type: 'string' },
    events: { type: 'string' },
    requests: { type: 'string' },
    'compare-p2p': { type: 'boolean', default: false },
  },
});

async function writeNdjson(path: string, rows: readonly unknown[]): Promise<void> {
  const out = createWriteStream(path);
  for (const row of rows) if (!out.write(`${JSON.stringify(row)}\n`)) await once(out, 'drain');
  out.end();
  await once(out, 'finish');
}

const t0 = performance.now();
const market = simulateMarket({ seed: Number(args.seed), entities: Number(args.entities), days: Number(args.days) });
const t1 = performance.now();
const decisions = scoreOffline(market.events, market.requests);
const t2 = performance.now();

const now = Date.parse(market.end);
const completed = completionIndex(market.events);
const labelled: LabelledDecision[] = [];
for (const d of decisions) {
  const label = trainingLabel(
    { createdAt: d.at, entityId: d.entityId, tradeId: d.tradeId, label: d.request.eventLabel },
    { now, completed, assumeLegitAfterDays: Number(args['assume-legit-after-days']) },
  );
  if (label !== null) labelled.push({ entityId: d.entityId, features: d.features, label });
}
const truth = decisions.map((d) => (d.request.label === 'fraud' ? 1 : 0) as 0 | 1);
const { policy, report, fit } = fitCandidate(labelled, DEFAULT_POLICY, {
  version: `sim-fit-${args.seed}`,
  lambda: args.lambda === undefined ? undefined : Number(args.lambda),
});
const t3 = performance.now();

/** Issue 10's features; weighted 0 they leave the policy as it was before them. */
const P2P_FEATURES = [
  'cash_out_burst',
  'dormant_reactivation',
  'young_account_reversible_method',
  'shared_identifier_entities',
  'new_counterparty_large_trade',
] as const;
let withoutP2p: ReturnType<typeof computeMetrics> | undefined;
if (args['compare-p2p']) {
  const before: Policy = {
    ...DEFAULT_POLICY,
    weights: { ...DEFAULT_POLICY.weights, ...Object.fromEntries(P2P_FEATURES.map((n) => [n, 0])) },
  };
  withoutP2p = computeMetrics(
    scoreOffline(market.events, market.requests, before).map((d) => d.score),
    truth,
  );
}

console.log(
  JSON.stringify(
    {
      market: {
        events: market.events.length,
        requests: market.requests.length,
        fraud: truth.filter((y) => y === 1).length,
        start: market.start,
        end: market.end,
      },
      seconds: { simulate: (t1 - t0) / 1000, score: (t2 - t1) / 1000, fit: (t3 - t2) / 1000 },
      default_policy_on_ground_truth: computeMetrics(
        decisions.map((d) => d.score),
        truth,
      ),
      ...(withoutP2p ? { default_policy_without_p2p_features: withoutP2p } : {}),
      fit: { iterations: fit.iterations, converged: fit.converged, bias: policy.bias },
      report,
    },
    null,
    2,
  ),
);

if (args.events) await writeNdjson(args.events, market.events);
if (args.requests) await writeNdjson(args.requests, market.requests);
