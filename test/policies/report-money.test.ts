// The HTML report's money section (docs/api.md, "Decisions by money"): a cost fit's report shows the
// base beside the candidate in the desk's terms and its frontier, drawn inline and listed, the
// candidate's own point marked; a report without the cost objective shows none of it; values escaped.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_POLICY, SIGNAL_NAMES } from '../../src/model/policy.ts';
import type { Economics } from '../../src/model/economics.ts';
import { fitCandidate, type LabelledDecision } from '../../src/policies/report.ts';
import { reportHtml } from '../../src/policies/report-html.ts';
import {
  candidatePoint,
  capacityLabel,
  declineLabel,
  frontierSpec,
  moneySection,
  type MoneyReportLike,
} from '../../src/policies/report-money.ts';
import type { DeskOutcomes } from '../../src/policies/desk-outcomes.ts';
import { mulberry32 } from '../../bench/quality/prng.ts';

const economics: Economics = {
  currency: 'USD',
  declineCost: { rate: 0.01, fixed: 20 },
  reviewCost: 3,
  reviewsPerDay: 50,
};

/** 2,000 decisions of 500 entities: fraud where chargebacks and new_account are high, amounts 20–5,000 USD. */
function decisions(seed: number): LabelledDecision[] {
  const next = mulberry32(seed);
  return Array.from({ length: 2000 }, (_, i) => {
    const features = Object.fromEntries(SIGNAL_NAMES.map((n) => [n, 0])) as Record<string, number>;
    features.chargebacks = next() < 0.1 ? 1 + Math.round(next() * 2) : 0;
    features.new_account = Math.round(next() * 1e4) / 1e4;
    const fraud = features.chargebacks + features.new_account + 0.8 * next() > 1.5;
    return {
      entityId: `e-${i % 500}`,
      features: features as LabelledDecision['features'],
      label: fraud ? 1 : 0,
      amount: Math.round(20 + next() * 4980),
      currency: 'USD',
    };
  });
}

const RECORD = {
  version: 'cost-fit',
  parent_version: 'base',
  created_at: new Date(0).toISOString(),
  status: 'candidate',
};
const pct = (x: number | null) => `${(x! * 100).toFixed(1)}%`;

describe('the HTML report of a cost fit', () => {
  const { report } = fitCandidate(decisions(11), DEFAULT_POLICY, {
    version: 'cost-fit',
    cost: { economics, decisionsPerDay: 1000 },
  });

  test('shows base and candidate side by side, the frontier drawn inline and listed, the candidate marked', async () => {
    const html = await reportHtml(RECORD, report);
    assert.match(html, /<h2>Decisions by money<\/h2>/);
    const table = /<table class="outcomes">([\s\S]*?)<\/table>/.exec(html)?.[1] ?? '';
    const { base, candidate } = report.outcomes!;
    const row = (name: string) => new RegExp(`<tr><th>${name}</th><td>([^<]*)</td><td>([^<]*)</td></tr>`).exec(table);
    assert.deepEqual(row('fraud stopped')?.slice(1), [pct(base.stopped_fraud), pct(candidate.stopped_fraud)]);
    assert.deepEqual(row('honest friction')?.slice(1), [pct(base.legit_friction), pct(candidate.legit_friction)]);
    assert.deepEqual(row('expected cost / decision')?.slice(1), [
      `${base.expected_cost!.toFixed(2)} USD`,
      `${candidate.expected_cost!.toFixed(2)} USD`,
    ]);
    for (const name of ['honest declined', 'fraud money passed', 'reviews per 1,000', 'decline precision'])
      assert.ok(row(name), name);
    // without plot data the frontier is the page's only drawing
    assert.equal((html.match(/<svg/g) ?? []).length, 1);
    assert.match(html, /Frontier: fraud stopped against honest friction/);
    const listed = /<table class="frontier">([\s\S]*?)<\/table>/.exec(html)?.[1] ?? '';
    assert.equal((listed.match(/<tr/g) ?? []).length, 1 + report.frontier!.length);
    assert.equal((listed.match(/<tr class="own">/g) ?? []).length, 1, 'one point is the candidate');
    assert.match(listed, /<tr class="own"><th>1%\+20 \(candidate\)<\/th><td>50 reviews\/day<\/td>/);
    assert.match(html, /capacity 50 reviews\/day of about 1000 decisions a day/);
    assert.ok(!/<script/i.test(html), 'no script');
    const withoutNamespaces = html.replace(/xmlns(:\w+)?="[^"]*"/g, '');
    assert.ok(!/(src|href)\s*=\s*["']?(https?:)?\/\//i.test(withoutNamespaces), 'no external resource');
  });

  test("the chart: one line per capacity, the candidate's point on the frontier at its own costs", () => {
    const spec = frontierSpec(report) as { data: { values: Array<{ capacity: string; candidate: boolean }> } };
    const values = spec.data.values;
    assert.equal(values.length, report.frontier!.length);
    assert.deepEqual(
      [...new Set(values.map((v) => v.capacity))],
      ['no reviews', '25 reviews/day', '50 reviews/day', '100 reviews/day'],
    );
    assert.equal(values.filter((v) => v.candidate).length, 1);
    const own = candidatePoint(report)!;
    assert.deepEqual(own.decline_cost, { rate: 0.01, fixed: 20 });
    assert.equal(own.reviews_per_day, 50);
    assert.deepEqual(own.outcomes, report.outcomes!.candidate, "the candidate's point is its own outcome");
  });
});

describe('the money section', () => {
  const outcomes = (currency: string): DeskOutcomes => ({
    decisions: 10,
    stopped_fraud: 0.5,
    legit_friction: 0.1,
    legit_not_approved: 0.2,
    legit_declined: 0.05,
    fraud_money_passed: 0.3,
    reviews_per_1k: 40,
    decline_precision: 0.6,
    expected_cost: 1.5,
    currency,
  });

  test('is absent from a report fitted without the cost objective', async () => {
    const plain: MoneyReportLike = {};
    assert.equal(moneySection(plain, undefined), '');
    assert.equal(frontierSpec(plain), undefined);
  });

  test('escapes what it shows', () => {
    const currency = '<img src=x>';
    const r: MoneyReportLike = {
      economics: { currency, declineCost: { rate: 0.02, fixed: 5 }, reviewCost: 2 },
      outcomes: { base: outcomes(currency), candidate: outcomes(currency) },
      frontier: [
        {
          decline_cost: { rate: 0.02, fixed: 5 },
          reviews_per_day: null,
          review_gain_min: 0,
          outcomes: outcomes(currency),
        },
      ],
    };
    const html = moneySection(r, undefined);
    assert.ok(!html.includes('<img'), html);
    assert.match(html, /&#60;img src=x&#62;/);
    assert.match(html, /<tr class="own"><th>2%\+5 \(candidate\)<\/th><td>no limit on reviews<\/td>/);
  });

  test('labels', () => {
    assert.equal(declineLabel({ rate: 0.0025, fixed: 5 }), '0.25%+5');
    assert.equal(capacityLabel(null), 'no limit on reviews');
    assert.equal(capacityLabel(0), 'no reviews');
    assert.equal(capacityLabel(37.5), '37.5 reviews/day');
  });
});
