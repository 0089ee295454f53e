// The report page (docs/api.md, "Policies"): self-contained (inline SVG, no script, no network), every value
// escaped; the plot data is the holdout's and agrees with the report's figures.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import { fitCandidate } from '../../src/policies/report.ts';
import { plotData } from '../../src/policies/plots.ts';
import { splitByEntity } from '../../src/policies/split.ts';
import { reportHtml } from '../../src/policies/report-html.ts';

const rows = Array.from({ length: 300 }, (_, i) => ({
  entityId: `entity-${i}`,
  features: {
    chargebacks: i % 5 === 0 ? 1 + (i % 3) : 0,
    completed_trades: (i % 9) / 3,
    payment_method_risk: (i % 4) / 4,
  },
  label: (i % 5 === 0 || i % 17 === 0 ? 1 : 0) as 0 | 1,
}));

test('plot data: curves run from nothing flagged to everything, bins and histograms count the whole holdout', () => {
  const { policy, report } = fitCandidate(rows, DEFAULT_POLICY, { version: 'plots' });
  const { holdout } = splitByEntity(rows, (r) => r.entityId, { fraction: 0.3 });
  const plots = plotData(holdout, DEFAULT_POLICY, policy);
  for (const p of [plots.base, plots.candidate]) {
    assert.deepEqual([p.curve[0]!.fpr, p.curve[0]!.tpr], [0, 0]);
    assert.deepEqual([p.curve.at(-1)!.fpr, p.curve.at(-1)!.tpr], [1, 1]);
    assert.equal(
      p.calibration.reduce((a, b) => a + b.count, 0),
      holdout.length,
    );
    assert.equal(
      [...p.histogram.fraud, ...p.histogram.legit].reduce((a, b) => a + b, 0),
      holdout.length,
    );
    assert.equal(
      p.histogram.fraud.reduce((a, b) => a + b, 0),
      report.holdout.fraud,
    );
  }
});

test('the page inlines five SVG plots, runs no script, loads nothing, and escapes what it shows', async () => {
  const version = '<script>alert(1)</script>';
  const { policy, report } = fitCandidate(rows, DEFAULT_POLICY, { version });
  const { holdout } = splitByEntity(rows, (r) => r.entityId, { fraction: 0.3 });
  const html = await reportHtml(
    { version, parent_version: '"><img src=x>', created_at: new Date(0).toISOString(), status: 'candidate' },
    { ...report, plots: plotData(holdout, DEFAULT_POLICY, policy) },
  );
  // five plots, and one per shaped signal
  assert.equal((html.match(/<svg/g) ?? []).length, 5 + Object.keys(policy.shapes ?? {}).length);
  assert.ok(!/<script/i.test(html), 'no script, and the version is escaped');
  assert.ok(!html.includes('<img'), 'attributes cannot be broken out of');
  const withoutNamespaces = html.replace(/xmlns(:\w+)?="[^"]*"/g, '');
  assert.ok(!/(src|href)\s*=\s*["']?(https?:)?\/\//i.test(withoutNamespaces), 'no external resource');
  for (const name of ['chargebacks', 'roc_auc', 'calibration_error', 'share flagged'])
    assert.ok(html.includes(name), name);
});

test('a shaped candidate: one contribution curve per shaped signal, on g, drawn on the page', async () => {
  const candidate = {
    ...DEFAULT_POLICY,
    version: 'bent',
    shapes: { velocity_trades: { knots: [0.5, 1.5], slopes: [0.2, 3] } },
  };
  const holdout = rows.map((r, i) => ({ ...r, features: { ...r.features, velocity_trades: (i % 7) / 2 } }));
  const plots = plotData(holdout, DEFAULT_POLICY, candidate);
  assert.deepEqual(
    plots.shapes!.map((s) => [s.name, s.knots]),
    [['velocity_trades', [0.5, 1.5]]],
  );
  const points = plots.shapes![0]!.points;
  assert.deepEqual([points[0]!.value, points.at(-1)!.value], [0, 3]);
  for (const p of points) {
    const g =
      DEFAULT_POLICY.weights.velocity_trades * Math.min(p.value, 0.5) +
      0.2 * Math.max(0, Math.min(p.value, 1.5) - 0.5) +
      3 * Math.max(0, p.value - 1.5);
    assert.ok(Math.abs(p.candidate - g) < 1e-9, `${p.value}: ${p.candidate} vs ${g}`);
    assert.ok(Math.abs(p.base - DEFAULT_POLICY.weights.velocity_trades * p.value) < 1e-9);
  }
  const { report } = fitCandidate(rows, DEFAULT_POLICY, { version: 'bent-report', shapes: false });
  const html = await reportHtml(
    { version: 'bent', parent_version: null, created_at: new Date(0).toISOString(), status: 'candidate' },
    { ...report, shapes: { base: {}, candidate: candidate.shapes }, plots },
  );
  assert.equal((html.match(/<svg/g) ?? []).length, 6);
  assert.ok(html.includes('Shaped signals') && html.includes('velocity_trades: contribution by value'));
  assert.match(html, /<th>velocity_trades<\/th><td>[^<]*<\/td><td>[^<]* \(shaped\)<\/td>/);
});
