// Evaluation (docs/rules.md): what a condition reads, with the values of that evaluation; a run-time
// error is a rule that did not match, reported, never thrown.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluateRules } from '../../src/rules/decide.ts';
import { RULE_VARIABLES, variableExample } from '../../src/rules/variables.ts';
import { facts, lookup, rule } from './engine-support.ts';

describe('reads', () => {
  test('variables and member paths, with their values', () => {
    const r = rule({
      condition:
        'amount > 1000 && context.payment_method == "card" && entity.account_age_days < 7.0 && signals.velocity_trades > 0.5',
      action: 'hold',
    });
    assert.deepEqual(r.evaluate(facts(), lookup), {
      matched: true,
      reads: {
        amount: 1500,
        'context.payment_method': 'card',
        'entity.account_age_days': 3,
        'signals.velocity_trades': 0.7,
      },
      cap: null,
    });
  });
  test('in_list records the value path and the lookup result', () => {
    const r = rule({ condition: 'in_list("mules", context.counterparty_id)', action: 'decline' });
    assert.deepEqual(r.evaluate(facts(), lookup).reads, {
      'context.counterparty_id': 'ent_mule9',
      'in_list(mules, context.counterparty_id)': true,
    });
    assert.deepEqual(r.lists, ['mules']);
  });
  test('in_list over a computed value is reported by the value looked up', () => {
    const r = rule({ condition: 'in_list("high_risk_countries", context.country.upperAscii())', action: 'review' });
    assert.deepEqual(r.evaluate(facts({ context: { country: 'ng' } }), lookup).reads, {
      'context.country': 'ng',
      'in_list(high_risk_countries, "NG")': true,
    });
  });
  test('a signal the score did not emit reads 0', () => {
    const r = rule({ condition: 'signals.chargebacks == 0', action: 'review' });
    assert.deepEqual(r.evaluate(facts(), lookup).reads, { 'signals.chargebacks': 0 });
  });
  test('signals read whole carry every policy signal, absent ones at 0', () => {
    const r = rule({ condition: 'signals.new_account == 1 && [signals].size() == 1', action: 'review' });
    const reads = r.evaluate(facts(), lookup).reads as { signals: Record<string, number> };
    assert.equal(reads.signals.velocity_trades, 0.7);
    assert.equal(reads.signals.chargebacks, 0);
  });
  test('has() of an absent member reads null; comprehension variables are not variables', () => {
    const r = rule({ condition: '!has(context.promo) && [1, 2].exists(amount, amount > 1)', action: 'review' });
    assert.deepEqual(r.evaluate(facts(), lookup).reads, { 'context.promo': null });
  });
  test('an index with a literal is a path; a computed index reads its base', () => {
    const r = rule({ condition: 'context["payment method"] == "card" && context.items[0] > 1.0', action: 'review' });
    assert.deepEqual(r.evaluate(facts({ context: { 'payment method': 'card', items: [2, 3] } }), lookup).reads, {
      'context["payment method"]': 'card',
      'context.items': [2, 3],
    });
  });
  test('reads are the same through evaluateRules, for rules and shadow rules', () => {
    const a = rule({ condition: 'score > 50.0', action: 'review' });
    const s = rule({ condition: 'risk_level == "medium"', action: 'hold' }, 'shadow');
    const v = evaluateRules([a, s], facts(), 'approve', lookup);
    assert.deepEqual(v.rules, [{ id: a.id, name: a.name, version: 1, action: 'review', reads: { score: 55 } }]);
    assert.deepEqual(v.shadow_rules, [
      { id: s.id, name: s.name, version: 1, action: 'hold', reads: { risk_level: 'medium' }, would_be_outcome: 'hold' },
    ]);
  });
  test('the entity object reads as a plain object', () => {
    const r = rule({ condition: 'entity.chargebacks == 0 && [entity].size() == 1', action: 'review' });
    const reads = r.evaluate(facts(), lookup).reads;
    assert.deepEqual(reads.entity, facts().entity);
  });
});

describe('run-time errors are no match', () => {
  test('an absent context member without has()', () => {
    const out = rule({ condition: 'context.promo == "x"', action: 'decline' }).evaluate(facts(), lookup);
    assert.equal(out.matched, false);
    assert.match(out.error ?? '', /promo/);
  });
  test('a dyn of the wrong type', () => {
    const out = rule({ condition: 'context.payment_method > 3', action: 'decline' }).evaluate(facts(), lookup);
    assert.equal(out.matched, false);
    assert.match(out.error ?? '', /overload/);
  });
  test('a null amount_ref compared without a guard', () => {
    const out = rule({ condition: 'amount_ref > 2', action: 'decline' }).evaluate(facts({ amount_ref: null }), lookup);
    assert.equal(out.matched, false);
    assert.ok(out.error);
  });
  test('in_list with a non-string value', () => {
    const out = rule({ condition: 'in_list("mules", context.counterparty_id)', action: 'decline' }).evaluate(
      facts({ context: { counterparty_id: 42 } }),
      lookup,
    );
    assert.equal(out.matched, false);
    assert.ok(out.error);
  });
  test('a lookup that throws is an absent entry, not a thrown score', () => {
    const out = rule({ condition: 'in_list("mules", context.counterparty_id)', action: 'decline' }).evaluate(
      facts(),
      () => {
        throw new Error('store down');
      },
    );
    assert.deepEqual(out, { matched: false, reads: {}, cap: null });
  });
  test('evaluateRules reports errors through onError and keeps scoring, even when onError throws', () => {
    const broken = rule({ condition: 'context.promo == "x"', action: 'decline' });
    const fine = rule({ condition: 'true', action: 'review' });
    const seen: string[] = [];
    const v = evaluateRules([broken, fine], facts(), 'approve', lookup, (r, e) => {
      seen.push(`${r.id}: ${e}`);
      throw new Error('metrics broke');
    });
    assert.equal(v.outcome, 'review');
    assert.equal(seen.length, 1);
    assert.match(seen[0]!, new RegExp(`^${broken.id}: condition: `));
  });
  test('odd facts (missing signals, a string amount) do not throw', () => {
    const odd = { ...facts(), signals: undefined, amount: '12' } as unknown as ReturnType<typeof facts>;
    const out = rule({ condition: 'amount > 1.0 || signals.velocity_trades > 0.0', action: 'review' }).evaluate(
      odd,
      lookup,
    );
    assert.equal(out.matched, false);
  });
  test('the facts object is not cached: a refilled object is read afresh', () => {
    const r = rule({ condition: 'amount > 1000', action: 'review' });
    const f = facts();
    assert.equal(r.evaluate(f, lookup).matched, true);
    f.amount = 10;
    assert.equal(r.evaluate(f, lookup).matched, false);
  });
});

describe('variables', () => {
  test('every documented root variable type-checks', () => {
    for (const v of RULE_VARIABLES) {
      if (v.name.includes('(') || v.name.includes('<')) continue;
      const r = rule({ condition: `has(context.zz) || ${v.name} == ${v.name}`, action: 'review' });
      assert.equal(r.evaluate(facts(), lookup).error, undefined, v.name);
    }
  });
  test('variableExample reads a decision’s value', () => {
    const f = facts();
    assert.equal(variableExample('amount', f), 1500);
    assert.equal(variableExample('entity.account_age_days', f), 3);
    assert.equal(variableExample('signals.velocity_trades', f), 0.7);
    assert.equal(variableExample('context.payment_method', f), 'card');
    assert.equal(variableExample('context.nothing', f), undefined);
    assert.equal(variableExample('constructor', f), undefined);
    assert.equal(variableExample('context.__proto__', f), undefined);
  });
});
