// Labels from reviews in the fit (docs/learning.md, "Labels from reviews"): each decision's label
// source, and the Horvitz–Thompson weight 1/rate of an approval drawn for review, with the
// unsampled approvals it stands for left out (the policy fit puts that weight in the bias alone:
// intercept.ts); the fit job counts them by source in its report.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LEFT_OUT, MAX_SAMPLE_WEIGHT, trainingExample, type ExampleSource } from '../../src/policies/labels.ts';
import { fitLogistic, fitSamples } from '../../src/policies/fit.ts';
import { fitIntercept, fitTwoStage } from '../../src/policies/intercept.ts';
import { LabelledSplit } from '../../src/policies/samples.ts';
import { DEFAULT_POLICY, SIGNAL_NAMES } from '../../src/model/policy.ts';
import { jobWork, type FitOutput, type WireDecision } from '../../src/policies/job-tasks.ts';

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-01T00:00:00Z');
const OLD = NOW - 61 * DAY;
const rules = { now: NOW, assumeLegitAfterDays: 60, completed: () => true };
const base: ExampleSource = { createdAt: OLD, entityId: 'e', tradeId: 't' };
const sampled = (resolution: string | null, rate = 0.02) => ({ reason: 'sample', sampleRate: rate, resolution });
const flagged = (resolution: string | null) => ({ reason: 'outcome', sampleRate: null, resolution });

test('each decision: its label, where it came from, and its weight', () => {
  const cases: Array<[string, ExampleSource, ReturnType<typeof trainingExample>]> = [
    [
      'api label on a review outcome',
      { ...base, label: 'fraud', labelSource: 'api', outcome: 'review' },
      { label: 1, source: 'api', weight: 1, sampled: false },
    ],
    [
      'event label',
      { ...base, label: 'fraud', labelSource: 'event', outcome: 'approve' },
      { label: 1, source: 'event', weight: 1, sampled: false },
    ],
    [
      'a row stored before sources',
      { ...base, label: 'legit' },
      { label: 0, source: 'api', weight: 1, sampled: false },
    ],
    [
      'review label on a flagged decision',
      { ...base, label: 'fraud', labelSource: 'review', outcome: 'review', review: flagged('decline') },
      { label: 1, source: 'review', weight: 1, sampled: false },
    ],
    [
      'approve without a label, old and completed',
      { ...base, outcome: 'hold', review: flagged('approve') },
      { label: 0, source: 'review', weight: 1, sampled: false },
    ],
    [
      'assumed legit, no sampling',
      { ...base, outcome: 'approve' },
      { label: 0, source: 'assumed', weight: 1, sampled: false },
    ],
    [
      'sampled approval, review label',
      {
        ...base,
        label: 'fraud',
        labelSource: 'review',
        outcome: 'approve',
        review: sampled('decline'),
        samplingRate: 0.02,
      },
      { label: 1, source: 'review', weight: 50, sampled: true },
    ],
    [
      'sampled approval, approve resolution made legit',
      { ...base, outcome: 'approve', review: sampled('approve', 0.25) },
      { label: 0, source: 'review', weight: 4, sampled: true },
    ],
    [
      'sampled at a tiny rate: the cap',
      { ...base, label: 'legit', labelSource: 'review', outcome: 'approve', review: sampled('approve', 1e-6) },
      { label: 0, source: 'review', weight: MAX_SAMPLE_WEIGHT, sampled: true },
    ],
    [
      'sampled approval with an event label: known whatever the draw',
      { ...base, label: 'fraud', labelSource: 'event', outcome: 'approve', review: sampled(null) },
      { label: 1, source: 'event', weight: 1, sampled: true },
    ],
    ['unsampled approval under sampling, assumed legit', { ...base, outcome: 'approve', samplingRate: 0.02 }, LEFT_OUT],
    [
      'unsampled approval under sampling, event label',
      { ...base, label: 'fraud', labelSource: 'event', outcome: 'approve', samplingRate: 0.02 },
      { label: 1, source: 'event', weight: 1, sampled: false },
    ],
    [
      'unsampled approval under sampling, too young for a label',
      { ...base, createdAt: NOW - DAY, outcome: 'approve', samplingRate: 0.02 },
      null,
    ],
    [
      'approve resolution, too young',
      { ...base, createdAt: NOW - DAY, outcome: 'review', review: flagged('approve') },
      null,
    ],
    [
      'a review or decline is never left out for sampling',
      { ...base, outcome: 'decline', samplingRate: 0.02 },
      { label: 0, source: 'assumed', weight: 1, sampled: false },
    ],
  ];
  for (const [name, source, expected] of cases) assert.deepEqual(trainingExample(source, rules), expected, name);
});

test('Horvitz–Thompson: one sampled approval in k, weighted k, stands for every approval', () => {
  // A population of approvals in runs of k alike rows; the draw keeps one of each run (rate 1/k).
  // The weighted sampled rows' log-likelihood is then the population's, term for term; the
  // unsampled rows are left out (their labels would count twice).
  const k = 8;
  const population: { x: number; y: 0 | 1 }[] = [];
  for (let g = 0; g < 60; g++) {
    const x = (g % 12) / 4;
    const y = (g % 5 === 0 || (x > 2 && g % 2 === 0) ? 1 : 0) as 0 | 1;
    for (let j = 0; j < k; j++) population.push({ x, y });
  }
  const split = new LabelledSplit(0);
  const name = SIGNAL_NAMES[0]!;
  population.forEach((row, i) => {
    const drawn = i % k === 0;
    const example = trainingExample(
      {
        ...base,
        label: drawn ? (row.y ? 'fraud' : 'legit') : null,
        labelSource: drawn ? 'review' : null,
        outcome: 'approve',
        review: drawn ? sampled(row.y ? 'decline' : 'approve', 1 / k) : null,
        samplingRate: 1 / k,
      },
      rules,
    );
    if (example === LEFT_OUT) split.leaveOut();
    else if (example) split.add({ entityId: `e${i}`, features: { [name]: row.x }, ...example });
  });
  assert.equal(split.count, 60);
  assert.deepEqual(split.tally.sampling, { decisions: 60, weight: 60 * k, left_out: 60 * (k - 1) });
  const vector = (x: number) => SIGNAL_NAMES.map((n) => (n === name ? x : 0));
  const full = fitLogistic(
    population.map((r) => vector(r.x)),
    population.map((r) => r.y),
    { lambda: 1 },
  );
  // Every parameter weighted (fitSamples), the sample fits as the population does.
  const weighted = fitSamples(split.train, { lambda: 1 });
  assert.ok(Math.abs(weighted.bias - full.bias) < 1e-7, `${weighted.bias} vs ${full.bias}`);
  assert.ok(Math.abs(weighted.weights[0]! - full.weights[0]!) < 1e-7);
  // The policy fit's two stages (intercept.ts): the slope is the 60 drawn rows' unweighted fit, and
  // the bias, re-estimated with the weights, makes the scores sum to the population's fraud count.
  const drawnRows = population.filter((_, i) => i % k === 0);
  const unweighted = fitLogistic(
    drawnRows.map((r) => vector(r.x)),
    drawnRows.map((r) => r.y),
    { lambda: 1 },
  );
  const twoStage = fitTwoStage(split.train, { lambda: 1 });
  assert.ok(Math.abs(twoStage.weights[0]! - unweighted.weights[0]!) < 1e-12);
  const predicted = population.reduce(
    (sum, r) => sum + 1 / (1 + Math.exp(-(twoStage.bias + twoStage.weights[0]! * r.x))),
    0,
  );
  const frauds = population.reduce((sum, r) => sum + r.y, 0);
  assert.ok(Math.abs(predicted - frauds) < 1e-5, `${predicted} vs ${frauds}`);
  // Given the population's slope, stage 2 recovers the population's bias from the sample alone.
  const bias = fitIntercept(split.train, full.weights, 0).bias;
  assert.ok(Math.abs(bias - full.bias) < 1e-6, `${bias} vs ${full.bias}`);
});

/** A stored decision as the fit job reads it; high values of the first risk signal for fraud. */
function row(i: number, fields: Partial<WireDecision>, fraudLike: boolean): WireDecision {
  const name = SIGNAL_NAMES.find((n) => n === 'chargebacks') ?? SIGNAL_NAMES[0]!;
  return {
    subject_id: `ent-${i}`,
    created_at: OLD,
    features: JSON.stringify({ [name]: fraudLike ? 1 + (i % 3) : i % 2 }),
    feature_set: 3,
    trade_id: `t-${i}`,
    risk_level: 'high',
    label: null,
    shadow_version: null,
    shadow_score: null,
    policy_version: DEFAULT_POLICY.version,
    completed: true,
    ...fields,
  };
}

test('the fit job counts its labels by source and reports the sampled approvals', () => {
  const rows: WireDecision[] = [];
  let i = 0;
  for (let n = 0; n < 35; n++) rows.push(row(i++, { label: 'fraud', label_source: 'api', outcome: 'review' }, true));
  for (let n = 0; n < 10; n++) rows.push(row(i++, { label: 'fraud', label_source: 'event', outcome: 'approve' }, true));
  for (let n = 0; n < 20; n++)
    rows.push(
      row(
        i++,
        {
          label: 'legit',
          label_source: 'review',
          outcome: 'review',
          review: { reason: 'outcome', sample_rate: null, resolution: 'approve' },
        },
        false,
      ),
    );
  for (let n = 0; n < 12; n++)
    rows.push(
      row(i++, { outcome: 'hold', review: { reason: 'outcome', sample_rate: null, resolution: 'approve' } }, false),
    );
  for (let n = 0; n < 15; n++) rows.push(row(i++, { outcome: 'approve' }, false));
  for (let n = 0; n < 30; n++) rows.push(row(i++, { outcome: 'approve', sampling_rate: 0.1 }, false));
  for (let n = 0; n < 5; n++)
    rows.push(
      row(
        i++,
        {
          label: 'legit',
          label_source: 'review',
          outcome: 'approve',
          sampling_rate: 0.1,
          review: { reason: 'sample', sample_rate: 0.1, resolution: 'approve' },
        },
        false,
      ),
    );
  for (let n = 0; n < 3; n++) rows.push(row(i++, { outcome: 'approve', created_at: NOW - DAY }, false));
  const work = jobWork({
    kind: 'fit',
    base: DEFAULT_POLICY,
    version: 'fit-test',
    now: NOW,
    assumeLegitAfterDays: 60,
    holdoutFraction: 0.3,
  });
  work.add(rows.slice(0, 60));
  work.add(rows.slice(60));
  assert.equal(work.labelled(), 35 + 10 + 20 + 12 + 15 + 5);
  const { report } = work.finish() as FitOutput;
  assert.deepEqual(report.labels, { fraud: 45, legit: 52 });
  assert.deepEqual(report.label_sources, { api: 35, event: 10, review: 37, assumed: 15 });
  assert.deepEqual(report.sampling, { decisions: 5, weight: 50, left_out: 30 });
});
