// Each compiled condition shape (src/rules/predicate.ts), on the facts a score builds: the rule is
// compiled, answers what docs/rules.md says, and answers what the same rule kept in cel-js does —
// reads, caps and errors included. Shapes outside the compiled set stay in cel-js and still work,
// and the activation is built once per score, a root only when a rule first reads it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileRule, isCompiledPredicate, type RuleBody } from '../../src/rules/compile.ts';
import { evaluateRules } from '../../src/rules/decide.ts';
import { SIGNAL_NAMES } from '../../src/model/policy.ts';
import type { RuleFacts } from '../../src/model/outcomes.ts';
import { facts, lookup } from './engine-support.ts';

function both(condition: string, body: Partial<RuleBody> = {}) {
  const stored = {
    id: 'rul_shape',
    version: 1,
    status: 'active' as const,
    body: { name: 'shape', condition, action: 'review' as const, ...body },
  };
  return {
    fast: compileRule(stored, SIGNAL_NAMES),
    slow: compileRule(stored, SIGNAL_NAMES, { predicates: false }),
  };
}

/** 'match' | 'no match' | 'error', after checking the compiled rule against cel-js on the same facts. */
function outcome(condition: string, f: RuleFacts): string {
  const { fast, slow } = both(condition);
  assert.ok(isCompiledPredicate(fast), `not compiled: ${condition}`);
  const got = fast.evaluate(f, lookup);
  assert.deepEqual(got, slow.evaluate(f, lookup), condition);
  return got.error !== undefined ? 'error' : got.matched ? 'match' : 'no match';
}

const ctx = (context: Record<string, unknown>): RuleFacts => facts({ context });

describe('compiled shapes', () => {
  test('comparisons of request, entity, signal and score fields with literals', () => {
    assert.equal(outcome('amount > 1000', facts()), 'match');
    assert.equal(outcome('amount <= 1000.0', facts()), 'no match');
    assert.equal(outcome('1000 < amount', facts()), 'match');
    assert.equal(outcome('entity.account_age_days < 7', facts()), 'match');
    assert.equal(outcome('entity.completed_trades == 0', facts()), 'match');
    assert.equal(outcome('signals.velocity_trades >= 0.7', facts()), 'match');
    assert.equal(outcome('signals.cash_out_burst != 0', facts()), 'no match'); // absent: 0
    assert.equal(outcome('score >= 60', facts()), 'no match');
    assert.equal(outcome('risk_level == "medium"', facts()), 'match');
    assert.equal(outcome('currency != "EUR"', facts()), 'match');
    assert.equal(outcome('entity_id > "ent_a"', facts()), 'match');
    assert.equal(outcome('amount > -1', facts()), 'match');
  });

  test('int against double: the environment converts an int literal; a dyn side compares exactly', () => {
    const big = facts({ amount: 2 ** 60, context: { n: 2 ** 60 } });
    assert.equal(outcome('amount == 1152921504606846977', big), 'match');
    assert.equal(outcome('context.n == 1152921504606846977', big), 'no match');
    assert.equal(outcome('context.n < 1152921504606846977', big), 'match');
    assert.equal(outcome('context.n in [1152921504606846976]', big), 'match');
  });

  test('nullable values: a comparison with null is an error, == null is not', () => {
    const none = facts({ amount_ref: null, safe_amount: null });
    assert.equal(outcome('amount_ref > 2', none), 'error');
    assert.equal(outcome('amount_ref != null && amount_ref > 2', none), 'no match');
    assert.equal(outcome('amount_ref != null && amount_ref > 2', facts()), 'match');
    assert.equal(outcome('safe_amount == null', none), 'match');
    assert.equal(outcome('entity.first_seen_at == null', facts()), 'no match');
  });

  test('`in` a literal list', () => {
    assert.equal(outcome('context.payment_method in ["card", "e_wallet"]', facts()), 'match');
    assert.equal(outcome('context.payment_method in ["cash"]', facts()), 'no match');
    assert.equal(outcome('context.payment_method in ["card"]', ctx({})), 'error');
    assert.equal(outcome('context.level in [1.0, 2.5]', ctx({ level: 2.5 })), 'match');
    assert.equal(outcome('context.level in ["1"]', ctx({ level: 1 })), 'no match');
    assert.equal(outcome('risk_level in []', facts()), 'no match');
  });

  test('in_list, with the value looked up and recorded in reads', () => {
    const { fast } = both('has(context.counterparty_id) && in_list("mules", context.counterparty_id)');
    assert.deepEqual(fast.evaluate(facts(), lookup).reads, {
      'context.counterparty_id': 'ent_mule9',
      'in_list(mules, context.counterparty_id)': true,
    });
    assert.equal(outcome('in_list("mules", entity_id)', facts()), 'no match');
    assert.equal(outcome('in_list("mules", context.counterparty_id)', ctx({ counterparty_id: 7 })), 'error');
    assert.equal(outcome('in_list("mules", context.counterparty_id)', ctx({})), 'error');
  });

  test('has: a present member, null included; absent is false, not an error', () => {
    assert.equal(outcome('has(context.country)', facts()), 'match');
    assert.equal(outcome('has(context.device)', facts()), 'no match');
    assert.equal(outcome('has(context.device)', ctx({ device: null })), 'match');
    assert.equal(outcome('has(entity.first_seen_at)', facts()), 'match');
    assert.equal(outcome('has(signals.cash_out_burst)', facts()), 'match');
  });

  test('!, && and ||, with CEL error absorption', () => {
    const missing = ctx({});
    assert.equal(outcome('!(amount > 1000)', facts()), 'no match');
    assert.equal(outcome('context.country == "NG" && amount > 1000', missing), 'error');
    assert.equal(outcome('context.country == "NG" && amount > 99999', missing), 'no match');
    assert.equal(outcome('amount > 99999 && context.country == "NG"', missing), 'no match');
    assert.equal(outcome('context.country == "NG" || amount > 1000', missing), 'match');
    assert.equal(outcome('context.country == "NG" || amount > 99999', missing), 'error');
    assert.equal(outcome('!(context.country == "NG") || amount > 1000', missing), 'match');
    assert.equal(outcome('context.vip == true && (risk_level == "high" || amount > 1)', ctx({ vip: true })), 'match');
    assert.equal(outcome('!context.vip', ctx({ vip: 'yes' })), 'error');
  });

  test('wrong kinds: a string ordered against a number is an error, compared for equality is not equal', () => {
    assert.equal(outcome('context.amount > 5', ctx({ amount: '7' })), 'error');
    assert.equal(outcome('context.amount == 5', ctx({ amount: '5' })), 'no match');
    assert.equal(
      outcome('signals.velocity_trades > 0.5', facts({ signals: { velocity_trades: 'x' } as never })),
      'error',
    );
  });

  test('a cap expression still runs in cel-js after a compiled condition matched', () => {
    const { fast, slow } = both('amount > 1000', { cap: 'amount_ref != null ? 100.0 * amount_ref : 200.0' });
    assert.deepEqual(fast.evaluate(facts(), lookup), slow.evaluate(facts(), lookup));
    assert.equal(fast.evaluate(facts(), lookup).cap, 300);
  });
});

describe('shapes left to cel-js', () => {
  for (const condition of [
    'context.items.exists(x, x > 100.0)',
    're2_matches(entity_id, "^ent_")',
    'amount * 2.0 > 1000.0',
    '(amount > 1.0 ? "a" : "b") == "a"',
    'context.address.city == "Lagos"',
    'amount in [score, 2.0]',
    'context.tags == ["a"]',
    'has(context.address.city)',
  ]) {
    test(condition, () => {
      const { fast, slow } = both(condition);
      assert.equal(isCompiledPredicate(fast), false);
      const f = ctx({ items: [50, 150], address: { city: 'Lagos' } });
      assert.deepEqual(fast.evaluate(f, lookup), slow.evaluate(f, lookup));
    });
  }
});

describe('the activation', () => {
  test('is built once per score, each root only when a rule first reads it', () => {
    const reads = { entity: 0, signals: 0, context: 0 };
    const counted = (): RuleFacts => {
      const base = facts();
      return Object.defineProperties({ ...base } as RuleFacts, {
        entity: { get: () => (reads.entity++, base.entity) },
        signals: { get: () => (reads.signals++, base.signals) },
        context: { get: () => (reads.context++, base.context) },
      });
    };
    const onAmount = both('amount > 1000').fast;
    evaluateRules([onAmount, onAmount], counted(), 'approve', lookup);
    assert.deepEqual(reads, { entity: 0, signals: 0, context: 0 });

    const rules = [
      both('entity.account_age_days < 7').fast,
      both('entity.chargebacks > 0 || context.country == "NG"').fast,
      both('context.items.exists(x, x > 1.0) || entity.fraud_reports > 0').fast, // cel-js reads the same roots
    ];
    evaluateRules(rules, counted(), 'approve', lookup);
    assert.deepEqual(reads, { entity: 1, signals: 0, context: 1 });
  });
});
