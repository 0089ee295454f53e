// The precedence and caps of docs/rules.md, as a table and as properties over random rule sets.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { evaluateRules } from '../../src/rules/decide.ts';
import type { CompiledRule } from '../../src/rules/compile.ts';
import { OUTCOMES, OUTCOME_SEVERITY, type Outcome } from '../../src/model/outcomes.ts';
import { facts, lookup, rule } from './engine-support.ts';

const T = 'true';
const F = 'false';

describe('precedence (table)', () => {
  const cases: Array<{
    name: string;
    policy: Outcome;
    rules: Array<{ c: string; action?: Outcome; override?: boolean; final?: boolean; status?: 'active' | 'shadow' }>;
    want: Outcome;
  }> = [
    { name: 'no rules: the policy', policy: 'review', rules: [], want: 'review' },
    {
      name: 'a matched hold over an approve policy',
      policy: 'approve',
      rules: [{ c: T, action: 'hold' }],
      want: 'hold',
    },
    {
      name: 'an unmatched decline changes nothing',
      policy: 'approve',
      rules: [{ c: F, action: 'decline' }],
      want: 'approve',
    },
    {
      name: 'a rule never lowers: approve under a review policy',
      policy: 'review',
      rules: [{ c: T, action: 'approve' }],
      want: 'review',
    },
    {
      name: 'most severe of several',
      policy: 'approve',
      rules: [
        { c: T, action: 'review' },
        { c: T, action: 'hold' },
        { c: T, action: 'review' },
      ],
      want: 'hold',
    },
    { name: 'decline beats hold', policy: 'hold', rules: [{ c: T, action: 'decline' }], want: 'decline' },
    {
      name: 'override approve beats a decline policy',
      policy: 'decline',
      rules: [{ c: T, action: 'approve', override: true }],
      want: 'approve',
    },
    {
      name: 'override approve beats a matched non-final decline',
      policy: 'approve',
      rules: [
        { c: T, action: 'decline' },
        { c: T, action: 'approve', override: true },
      ],
      want: 'approve',
    },
    {
      name: 'a final decline beats an override',
      policy: 'approve',
      rules: [
        { c: T, action: 'approve', override: true },
        { c: T, action: 'decline', final: true },
      ],
      want: 'decline',
    },
    {
      name: 'an unmatched final decline does not stop the override',
      policy: 'hold',
      rules: [
        { c: T, action: 'approve', override: true },
        { c: F, action: 'decline', final: true },
      ],
      want: 'approve',
    },
    {
      name: 'an unmatched override does nothing',
      policy: 'decline',
      rules: [{ c: F, action: 'approve', override: true }],
      want: 'decline',
    },
    {
      name: 'a shadow decline does not act',
      policy: 'approve',
      rules: [{ c: T, action: 'decline', final: true, status: 'shadow' }],
      want: 'approve',
    },
    {
      name: 'a shadow override does not act',
      policy: 'decline',
      rules: [{ c: T, action: 'approve', override: true, status: 'shadow' }],
      want: 'decline',
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const compiled = c.rules.map((r) =>
        rule({ condition: r.c, action: r.action, override: r.override, final: r.final }, r.status ?? 'active'),
      );
      const verdict = evaluateRules(compiled, facts(), c.policy, lookup);
      assert.equal(verdict.outcome, c.want);
      assert.deepEqual(
        verdict.rules.map((m) => m.id),
        compiled.filter((r, i) => r.status === 'active' && c.rules[i]!.c === T).map((r) => r.id),
      );
    });
  }

  test('shadow matches carry their would-be outcome', () => {
    const active = rule({ condition: T, action: 'review' });
    const shadowHold = rule({ condition: T, action: 'hold' }, 'shadow');
    const shadowApprove = rule({ condition: T, action: 'approve', override: true }, 'shadow');
    const v = evaluateRules([active, shadowHold, shadowApprove], facts(), 'approve', lookup);
    assert.equal(v.outcome, 'review');
    assert.deepEqual(
      v.shadow_rules.map((s) => [s.id, s.would_be_outcome]),
      [
        [shadowHold.id, 'hold'],
        [shadowApprove.id, 'approve'],
      ],
    );
  });
});

describe('caps', () => {
  test('the least of the policy and the matched caps; numbers and expressions', () => {
    const v = evaluateRules(
      [
        rule({ condition: T, cap: 600 }),
        rule({ condition: T, cap: 'amount_ref * 150' }),
        rule({ condition: F, cap: 10 }),
      ],
      facts(),
      'approve',
      lookup,
    );
    assert.equal(v.safe_amount, 450);
    assert.deepEqual(
      v.rules.map((r) => r.cap),
      [600, 450],
    );
    assert.equal(v.outcome, 'approve');
  });
  test('a cap above the policy never raises it', () => {
    assert.equal(evaluateRules([rule({ condition: T, cap: 5000 })], facts(), 'approve', lookup).safe_amount, 800);
  });
  test('a policy without a safe amount is capped by the rule', () => {
    assert.equal(
      evaluateRules([rule({ condition: T, cap: 200 })], facts({ safe_amount: null }), 'approve', lookup).safe_amount,
      200,
    );
  });
  test('a cap that errors or is negative is ignored and reported', () => {
    const errors: string[] = [];
    const bad = rule({ condition: T, cap: 'amount_ref * 1.0' });
    const negative = rule({ condition: T, cap: '0.0 - amount' });
    const v = evaluateRules([bad, negative], facts({ amount_ref: null }), 'approve', lookup, (r, e) =>
      errors.push(`${r.id} ${e}`),
    );
    assert.equal(v.safe_amount, 800);
    assert.equal(errors.length, 2);
    assert.match(errors[0]!, /cap:/);
    assert.match(errors[1]!, /not a number ≥ 0/);
  });
  test('shadow caps do not apply', () => {
    assert.equal(
      evaluateRules([rule({ condition: T, cap: 1 }, 'shadow')], facts(), 'approve', lookup).safe_amount,
      800,
    );
  });
  test('score and risk_level are not part of the verdict: the policy keeps them', () => {
    const v = evaluateRules([rule({ condition: T, action: 'decline' })], facts(), 'approve', lookup);
    assert.deepEqual(Object.keys(v).sort(), ['outcome', 'rules', 'safe_amount', 'shadow_rules']);
  });
});

// A pool of rules compiled once; the properties draw sets from it.
const CONDITIONS = [
  T,
  F,
  'amount > 1000',
  'context.payment_method == "card"',
  'in_list("mules", context.counterparty_id)',
  'context.missing == "x"',
  'score > 50',
  'entity.completed_trades == 0',
];
const ACTIONS: Array<Outcome | undefined> = [undefined, ...OUTCOMES];
const pool = new Map<string, CompiledRule>();
function pooled(i: number, a: number, flag: number, cap: number | null, shadow: boolean): CompiledRule {
  const action = ACTIONS[a] ?? (cap === null ? 'review' : undefined);
  const key = `${i}/${action}/${flag}/${cap}/${shadow}`;
  let r = pool.get(key);
  if (!r) {
    r = rule(
      {
        condition: CONDITIONS[i]!,
        action,
        override: action === 'approve' && flag === 1,
        final: action === 'decline' && flag === 1,
        ...(cap === null ? {} : { cap: cap % 2 === 0 ? cap : `amount * ${cap / 1000}` }),
      },
      shadow ? 'shadow' : 'active',
    );
    pool.set(key, r);
  }
  return r;
}
const ruleArb = fc
  .record({
    i: fc.nat(CONDITIONS.length - 1),
    a: fc.nat(ACTIONS.length - 1),
    flag: fc.nat(1),
    cap: fc.option(fc.integer({ min: 0, max: 3000 }), { nil: null }),
    shadow: fc.boolean(),
  })
  .map((r) => pooled(r.i, r.a, r.flag, r.cap, r.shadow));
const factsArb = fc
  .record({
    amount: fc.double({ min: 0, max: 10_000, noNaN: true }),
    safe: fc.option(fc.double({ min: 0, max: 10_000, noNaN: true }), { nil: null }),
    pm: fc.constantFrom('card', 'sepa'),
    cp: fc.constantFrom('ent_mule9', 'ent_ok'),
  })
  .map((f) =>
    facts({ amount: f.amount, safe_amount: f.safe, context: { payment_method: f.pm, counterparty_id: f.cp } }),
  );
const outcomeArb = fc.constantFrom(...OUTCOMES);

describe('precedence (properties)', () => {
  test('a rule never raises safe_amount', () => {
    fc.assert(
      fc.property(fc.array(ruleArb, { maxLength: 8 }), factsArb, outcomeArb, (rules, f, policy) => {
        const v = evaluateRules(rules, f, policy, lookup);
        if (f.safe_amount !== null) assert.ok(v.safe_amount !== null && v.safe_amount <= f.safe_amount);
        for (const m of v.rules)
          if (typeof m.cap === 'number') assert.ok(v.safe_amount !== null && v.safe_amount <= m.cap);
      }),
    );
  });
  test('adding a matched final decline always declines', () => {
    const finalDecline = rule({ condition: T, action: 'decline', final: true });
    fc.assert(
      fc.property(fc.array(ruleArb, { maxLength: 8 }), factsArb, outcomeArb, fc.nat(8), (rules, f, policy, at) => {
        const withIt = [...rules.slice(0, at), finalDecline, ...rules.slice(at)];
        assert.equal(evaluateRules(withIt, f, policy, lookup).outcome, 'decline');
      }),
    );
  });
  test('the outcome is never less severe than the policy’s unless an override approve matched', () => {
    fc.assert(
      fc.property(fc.array(ruleArb, { maxLength: 8 }), factsArb, outcomeArb, (rules, f, policy) => {
        const v = evaluateRules(rules, f, policy, lookup);
        const overridden = v.rules.some((m) => m.action === 'approve' && m.override === true);
        if (!overridden) assert.ok(OUTCOME_SEVERITY[v.outcome] >= OUTCOME_SEVERITY[policy]);
        else assert.ok(v.outcome === 'approve' || v.rules.some((m) => m.action === 'decline' && m.final === true));
      }),
    );
  });
  test('shadow rules never change the verdict', () => {
    fc.assert(
      fc.property(fc.array(ruleArb, { maxLength: 8 }), factsArb, outcomeArb, (rules, f, policy) => {
        const all = evaluateRules(rules, f, policy, lookup);
        const activeOnly = evaluateRules(
          rules.filter((r) => r.status === 'active'),
          f,
          policy,
          lookup,
        );
        assert.deepEqual({ ...all, shadow_rules: [] }, { ...activeOnly, shadow_rules: [] });
        for (const s of all.shadow_rules) assert.ok(OUTCOMES.includes(s.would_be_outcome));
      }),
    );
  });
  test('a shadow rule’s would-be outcome is the outcome had it been active', () => {
    fc.assert(
      fc.property(fc.array(ruleArb, { maxLength: 6 }), factsArb, outcomeArb, (rules, f, policy) => {
        const v = evaluateRules(rules, f, policy, lookup);
        for (const s of v.shadow_rules) {
          const shadowRule = rules.find((r) => r.id === s.id)!;
          const promoted = { ...shadowRule, status: 'active' as const, evaluate: shadowRule.evaluate };
          const asActive = evaluateRules([...rules.filter((r) => r.status === 'active'), promoted], f, policy, lookup);
          assert.equal(s.would_be_outcome, asActive.outcome);
        }
      }),
    );
  });
});
