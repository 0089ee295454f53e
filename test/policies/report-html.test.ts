// The report page (docs/api.md, "Policies"): self-contained (inline SVG, no script, no network), every value
// escaped; the plot data is the holdout's and agrees with the report's figures.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_POLICY } from '../../src/policies/policy.ts';
import { fitCandidate } from '../../src/policies/report.ts';
import { plotData } from '../../src/policies/plots.ts';
import { splitByEntity } from '../../src/policies/split.ts';
import { reportHtml } from '../../src/policies/report-html.ts';

const rows = Array.from({ length: 300 }, (_, i) => ({
  entityId: `entity-${i}`,
  features: { chargebacks: i % 5 === 0 ? 1 + (i % 3) : 0, completed_trades: (i % 9) / 3, payment_method_risk: (i % 4) / 4 },
  label: (i % 5 === 0 || i % 17 === 0 ? 1 : 0) as 0 | 1,
}));

test('plot data: curves run from nothing flagged to everything, bins and histograms count the whole holdout', () => {
  const { policy, report } = fitCandidate(rows, DEFAULT_POLICY, { version: 'plots' });
  const { holdout } = splitByEntity(rows, (r) => r.entityId, { fraction: 0.3 });
  const plots = plotData(holdout, DEFAULT_POLICY, policy);
  for (const p of [plots.base, plots.candidate]) {
    assert.deepEqual([p.curve[0]!.fpr, p.curve[0]!.tpr], [0, 0]);
    assert.deepEqual([p.curve.at(-1)!.fpr, p.curve.at(-1)!.tpr], [1, 1]);
    assert.equal(p.calibration.reduce((a, b) => a + b.count, 0), holdout.length);
    assert.equal([...p.histogram.fraud, ...p.histogram.legit].reduce((a, b) => a + b, 0), holdout.length);
    assert.equal(p.histogram.fraud.reduce((a, b) => a + b, 0), report.holdout.fraud);
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
  assert.equal((html.match(/<svg/g) ?? []).length, 5);
  assert.ok(!/<script/i.test(html), 'no script, and the version is escaped');
  assert.ok(!html.includes('<img'), 'attributes cannot be broken out of');
  const withoutNamespaces = html.replace(/xmlns(:\w+)?="[^"]*"/g, '');
  assert.ok(!/(src|href)\s*=\s*["']?(https?:)?\/\//i.test(withoutNamespaces), 'no external resource');
  for (const name of ['chargebacks', 'roc_auc', 'calibration_error', 'share flagged']) assert.ok(html.includes(name), name);
});
