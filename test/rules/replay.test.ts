// docs/rules.md, "Testing a rule": the pure replay — lists as they were at each decision's time,
// the facts rebuilt from a stored decision, and the tally (counts, outcomes before and after,
// the labelled matrix, money per currency, examples).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ListHistory, type ListEntryRow } from '../../src/rules/replay-lists.ts';
import {
  factsOf,
  RuleTestTally,
  MAX_EXAMPLES,
  UNSAVED_RULE_ID,
  type ReplayRow,
  type ReplaySettings,
} from '../../src/rules/replay.ts';
import { compileRule, type RuleBody } from '../../src/rules/compile.ts';
import { evaluateRules } from '../../src/rules/decide.ts';
import { SIGNAL_NAMES } from '../../src/model/policy.ts';

const T0 = Date.UTC(2026, 9, 1);
const HOUR = 3_600_000;
const settings: ReplaySettings = {
  outcomes: { low: 'approve', medium: 'approve', high: 'review', critical: 'decline' },
  signalNames: SIGNAL_NAMES,
  disputePrior: { alpha: 1, beta: 9 },
};
const entity = {
  account_age_days: 3,
  completed_trades: 0,
  chargebacks: 0,
  fraud_reports: 0,
  disputes_lost: 0,
  first_seen_at: null,
};

let seq = 0;
function row(over: Partial<ReplayRow> & { amount?: number; currency?: string; riskLevel?: string } = {}): ReplayRow {
  const { amount = 100, currency = 'USDT', riskLevel = 'low', ...rest } = over;
  seq++;
  return {
    id: `dec_${String(seq).padStart(6, '0')}`,
    subject_id: `ent-${seq % 7}`,
    created_at: T0 + seq * HOUR,
    request: JSON.stringify({ amount, currency, payment_method: 'card' }),
    features: JSON.stringify({ velocity_trades: 0.5 }),
    feature_set: 3,
    result: JSON.stringify({
      entity_id: 'x',
      score: 42.5,
      risk_level: riskLevel,
      signals: [{ name: 'a', score: 1 }],
      safe_amount: 250,
    }),
    risk_level: riskLevel,
    outcome: 'approve',
    rules: null,
    label: null,
    rule_inputs: JSON.stringify({
      amount_ref: amount / 100,
      context: { payment_method: 'card', country: 'NG' },
      entity,
      safe_amount: 250,
    }),
    ...rest,
  };
}

const rule = (body: Partial<RuleBody> & { condition: string }, id = UNSAVED_RULE_ID) =>
  compileRule({ id, version: 1, status: 'active', body: { name: 'r', action: 'decline', ...body } }, SIGNAL_NAMES);
const tally = (body: Partial<RuleBody> & { condition: string }, lists: ListEntryRow[] = [], id?: string) =>
  new RuleTestTally(rule(body, id), new ListHistory(lists), settings, evaluateRules);

describe('lists as they were', () => {
  const entry = (over: Partial<ListEntryRow>): ListEntryRow => ({
    list: 'mules',
    value: 'v',
    added_at: T0,
    removed_at: null,
    expires_at: null,
    list_deleted_at: null,
    ...over,
  });

  test('an entry counts from its adding, up to its removal, its expiry or its list deletion', () => {
    const h = new ListHistory([
      entry({ value: 'added', added_at: T0 + 10 }),
      entry({ value: 'removed', removed_at: T0 + 10 }),
      entry({ value: 'expires', expires_at: T0 + 10 }),
      entry({ value: 'deleted', list_deleted_at: T0 + 10 }),
    ]);
    assert.equal(h.has('mules', 'added', T0 + 9), false);
    assert.equal(h.has('mules', 'added', T0 + 10), true);
    for (const v of ['removed', 'expires', 'deleted']) {
      assert.equal(h.has('mules', v, T0 + 9), true, v);
      assert.equal(h.has('mules', v, T0 + 10), false, v);
    }
    assert.equal(h.has('other', 'added', T0 + 20), false);
  });

  test('a value removed and added again counts in both intervals, not between', () => {
    const h = new ListHistory([entry({ added_at: T0, removed_at: T0 + 10 }), entry({ added_at: T0 + 20 })]);
    assert.deepEqual(
      [T0 + 5, T0 + 15, T0 + 25].map((t) => h.has('mules', 'v', t)),
      [true, false, true],
    );
  });
});

describe('facts of a stored decision', () => {
  test('request, signals, score, risk level and rule inputs are read back', () => {
    const { facts, complete, amount } = factsOf(row({ amount: 250, currency: 'EUR', riskLevel: 'high' }), settings);
    assert.equal(complete, true);
    assert.equal(amount, 250);
    assert.equal(facts.amount, 250);
    assert.equal(facts.currency, 'EUR');
    assert.equal(facts.amount_ref, 2.5);
    assert.equal(facts.score, 42.5);
    assert.equal(facts.risk_level, 'high');
    assert.equal(facts.safe_amount, 250);
    assert.equal(facts.signals.velocity_trades, 0.5);
    assert.equal(Object.keys(facts.signals).length, SIGNAL_NAMES.length);
    assert.deepEqual(facts.context, { payment_method: 'card', country: 'NG' });
  });

  test('without rule inputs, the context is the request summary and the entity facts are absent', () => {
    const { facts, complete } = factsOf(row({ rule_inputs: null }), settings);
    assert.equal(complete, false);
    assert.deepEqual(facts.context, { payment_method: 'card' });
    assert.equal(facts.amount_ref, null);
    assert.equal(facts.safe_amount, 250, "the result's safe amount");
    assert.equal(facts.entity.account_age_days, undefined);
  });
});

describe('the tally', () => {
  test('counts, outcomes before and after, the labelled matrix and money per currency', () => {
    const t = tally({ condition: 'amount > 500.0', action: 'hold' });
    t.add(row({ amount: 1000, label: 'fraud' }));
    t.add(row({ amount: 600, currency: 'EUR', label: 'legit' }));
    t.add(row({ amount: 700.1 }));
    t.add(row({ amount: 100, label: 'fraud' }));
    t.add(row({ amount: 100, label: 'legit', outcome: 'decline', riskLevel: 'critical' }));
    t.add(row({ amount: 900, outcome: 'decline', riskLevel: 'critical' }));
    const r = t.result();
    assert.equal(r.decisions, 6);
    assert.equal(r.matched, 4);
    assert.deepEqual(r.outcomes.before, { approve: 4, review: 0, hold: 0, decline: 2 });
    assert.deepEqual(r.outcomes.after, { approve: 1, review: 0, hold: 3, decline: 2 });
    assert.equal(r.changed, 3);
    assert.deepEqual(r.labelled, { fraud: { matched: 1, total: 2 }, legit: { matched: 1, total: 2 } });
    assert.deepEqual(r.amount_matched, { EUR: 600, USDT: 2600.1 });
    assert.equal(r.examples.length, 4);
    assert.deepEqual(r.examples[0]!.reads, { amount: 900 });
  });

  test('money is summed exactly, to the currency minor unit', () => {
    const t = tally({ condition: 'amount > 0.0' });
    for (let i = 0; i < 10; i++) t.add(row({ amount: 0.1, currency: 'BTC' }));
    t.add(row({ amount: 0.2, currency: 'USDT' }));
    t.add(row({ amount: 0.1, currency: 'USDT' }));
    assert.deepEqual(t.result().amount_matched, { BTC: 1, USDT: 0.3 });
  });

  test('a decision older than outcomes gets the policy outcome of its risk level', () => {
    const t = tally({ condition: 'amount > 0.0', action: 'review' });
    t.add(row({ outcome: null, riskLevel: 'critical' }));
    t.add(row({ outcome: null, riskLevel: 'low' }));
    const r = t.result();
    assert.deepEqual(r.outcomes.before, { approve: 1, review: 0, hold: 0, decline: 1 });
    assert.deepEqual(r.outcomes.after, { approve: 0, review: 1, hold: 0, decline: 1 });
  });

  test('an override approve beats the policy but not a final decline that matched then', () => {
    const t = tally({ condition: 'amount > 0.0', action: 'approve', override: true });
    t.add(row({ outcome: 'review', riskLevel: 'high' }));
    const final = [{ id: 'rul_final', name: 'f', version: 2, action: 'decline', final: true, reads: {} }];
    t.add(row({ outcome: 'decline', rules: JSON.stringify(final) }));
    const r = t.result();
    assert.deepEqual(r.outcomes.after, { approve: 1, review: 0, hold: 0, decline: 1 });
  });

  test("testing a rule that decided the decision replaces its earlier version's effect", () => {
    const earlier = [{ id: 'rul_same', name: 'r', version: 1, action: 'decline', reads: {} }];
    const t = tally({ condition: 'amount > 5000.0', action: 'decline' }, [], 'rul_same');
    t.add(row({ amount: 1000, outcome: 'decline', rules: JSON.stringify(earlier) }));
    const r = t.result();
    assert.equal(r.matched, 0);
    assert.deepEqual(r.outcomes.after, { approve: 1, review: 0, hold: 0, decline: 0 });
  });

  test('in_list reads each list as it was at the decision', () => {
    const lists: ListEntryRow[] = [
      {
        list: 'mules',
        value: 'ent-late',
        added_at: T0 + 1000 * HOUR,
        removed_at: null,
        expires_at: null,
        list_deleted_at: null,
      },
      {
        list: 'mules',
        value: 'ent-gone',
        added_at: T0,
        removed_at: T0 + 1000 * HOUR,
        expires_at: null,
        list_deleted_at: null,
      },
    ];
    const t = tally({ condition: 'in_list("mules", entity_id)' }, lists);
    const early = (subject: string) => row({ subject_id: subject, created_at: T0 + 10 * HOUR });
    const late = (subject: string) => row({ subject_id: subject, created_at: T0 + 2000 * HOUR });
    const rows = [early('ent-late'), late('ent-late'), early('ent-gone'), late('ent-gone')];
    for (const r of rows) t.add(r);
    const r = t.result();
    assert.equal(r.matched, 2);
    assert.deepEqual(r.examples.map((e) => e.decision_id).sort(), [rows[1]!.id, rows[2]!.id].sort());
  });

  test('entity facts absent from an old decision do not match a condition on them', () => {
    const t = tally({ condition: 'entity.account_age_days < 30.0' });
    t.add(row());
    t.add(row({ rule_inputs: null }));
    const r = t.result();
    assert.equal(r.matched, 1);
    assert.equal(r.without_inputs, 1);
  });

  test(`examples are the ${MAX_EXAMPLES} most recent matches, newest first, with their reads`, () => {
    const t = tally({ condition: 'amount >= 1.0' });
    const rows = Array.from({ length: 45 }, (_, i) => row({ amount: i + 1 }));
    for (const r of rows) t.add(r);
    const { examples, matched } = t.result();
    assert.equal(matched, 45);
    assert.equal(examples.length, MAX_EXAMPLES);
    assert.deepEqual(
      examples.map((e) => e.decision_id),
      rows
        .slice(-MAX_EXAMPLES)
        .reverse()
        .map((r) => r.id),
    );
    assert.deepEqual(examples[0]!.reads, { amount: 45 });
  });
});
