// docs/rules.md, "Cost": the red team's bombs are refused when saved with the estimate in the
// message, a stored one (saved before the estimate existed) is skipped and never run, the rules a
// desk writes stay well within the budget, and the run-time budget's second line: a rule over it
// does not match, is reported, and only rules whose estimate allows it are timed.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkRule, compileRule, type CompiledRule } from '../../src/rules/compile.ts';
import { evaluateRules, type RuleGuard } from '../../src/rules/decide.ts';
import { estimateCost, patternStates } from '../../src/rules/cost.ts';
import { RULE_LIMITS, ruleEnvironment } from '../../src/rules/cel-env.ts';
import { SIGNAL_NAMES } from '../../src/model/policy.ts';
import { LISTS, facts, lookup, rule } from './engine-support.ts';

const A = 'x'.repeat(1000);
const hundred = [...Array(100).keys()].join(',');
const concat = (m: number) => Array.from({ length: m }, () => 'a').join('+');

/** The red team's fixtures (issue "Hardening, round four", items 1 and 2), each within the save limits of shape. */
const BOMBS: Record<string, string> = {
  'heap: a 100,000-character string split and mapped to itself': `cel.bind(a, "${A}", cel.bind(b, [${hundred}].map(i, a).join(), b.split("").map(x, b.split("")).size() == 0))`,
  'CPU, m = 1: contains for every character of a 1,000-character constant': `cel.bind(a, "${A}", cel.bind(b, ${concat(1)}, b.split("").exists(x, b.contains(x + "!"))))`,
  'CPU, m = 10': `cel.bind(a, "${A}", cel.bind(b, ${concat(10)}, b.split("").exists(x, b.contains(x + "!"))))`,
  'CPU, m = 30': `cel.bind(a, "${A}", cel.bind(b, ${concat(30)}, b.split("").exists(x, b.contains(x + "!"))))`,
  'CPU over the request: every character of a context string against the whole string':
    'context.note.split("").exists(x, context.note.contains(x + x))',
  'a counted repetition of 1,000 automaton states over a 1,024-character string': `re2_matches(context.note, "[a-z]{500}[0-9]{500}")`,
};

const DESK_RULES = [
  'amount > 1000 && context.payment_method == "card"',
  'has(context.country) && in_list("high_risk_countries", context.country)',
  'entity.completed_trades == 0 && amount_ref != null && amount_ref > 2',
  'signals.velocity_trades > 0.5 || score >= 80',
  'in_list("mules", entity_id) || in_list("mules", context.counterparty_id)',
  'risk_level in ["high", "critical"] && amount > safe_amount',
  're2_matches(entity_id, "^ent_[a-z]+[0-9]$")',
  're2_matches(context.reference, "^[A-Z]{2}-[0-9]{6}$")',
  'context.items.exists(i, i > 100)',
  'context.tags.exists(t, t.startsWith("promo") || t.contains("bonus"))',
  'context.note.lowerAscii().contains("refund")',
];

describe('worst-case cost, estimated when saved', () => {
  for (const [name, condition] of Object.entries(BOMBS)) {
    test(`refused: ${name}`, () => {
      assert.ok(condition.length <= RULE_LIMITS.maxLength, `${condition.length} characters`);
      const problems = checkRule({ name: 'bomb', condition, action: 'hold' }, SIGNAL_NAMES, LISTS);
      assert.equal(problems.length, 1, JSON.stringify(problems));
      assert.equal(problems[0]!.field, 'condition');
      assert.match(
        problems[0]!.message,
        /^line 1, column 1: its worst-case cost is estimated at [\d,]+ units, over the budget of 200,000/,
      );
    });
  }

  test('a stored bomb (saved before the estimate) does not compile, so a registry skips it instead of running it', () => {
    assert.throws(
      () =>
        compileRule(
          {
            id: 'rul_bomb',
            version: 1,
            status: 'shadow',
            body: { name: 'b', condition: BOMBS['CPU, m = 10']!, action: 'hold' },
          },
          SIGNAL_NAMES,
        ),
      /worst-case cost/,
    );
  });

  for (const condition of DESK_RULES) {
    test(`a desk's rule stays within the budget: ${condition}`, () => {
      assert.deepEqual(checkRule({ name: 'r', condition, action: 'review' }, SIGNAL_NAMES, LISTS), []);
      const { cost } = estimateCost(ruleEnvironment(SIGNAL_NAMES).env.parse(condition).ast);
      assert.ok(cost <= RULE_LIMITS.maxCost, `estimated ${cost}`);
    });
  }

  test('a cap expression is bounded like a condition', () => {
    const problems = checkRule(
      {
        name: 'r',
        condition: 'true',
        cap: `size(context.note.split("").filter(x, context.note.contains(x + x))) * 1.0`,
      },
      SIGNAL_NAMES,
      LISTS,
    );
    assert.equal(problems[0]?.field, 'cap');
    assert.match(problems[0]!.message, /worst-case cost/);
  });

  test('the estimate grows with what a comprehension is handed, and with the work of its body', () => {
    const cost = (c: string) => estimateCost(ruleEnvironment(SIGNAL_NAMES).env.parse(c).ast).cost;
    assert.ok(cost('context.items.exists(i, i == "a")') < cost('context.items.exists(i, i.contains("a"))'));
    assert.ok(cost('"abc".split("").exists(x, x == "a")') < cost('context.note.split("").exists(x, x == "a")'));
    assert.ok(cost(`cel.bind(a, "${'x'.repeat(10)}", a + a)`) < cost(`cel.bind(a, "${'x'.repeat(1000)}", a + a)`));
  });

  test("a pattern's states count its counted repetitions", () => {
    assert.equal(patternStates('^ent_[a-z]+$'), 12);
    assert.equal(patternStates('[a-z]{500}'), 10 * 500);
    assert.equal(patternStates('a{2,}'), 5 * 3);
    assert.equal(patternStates('(a{10}){10}'), 11 * 100);
  });
});

describe('the run-time budget (second line)', () => {
  /** A rule standing for one the estimate got wrong: it takes `ms` of CPU and would match. */
  function slow(ms: number, cost: number): CompiledRule {
    const base = rule({ condition: 'true', action: 'decline' });
    return {
      ...base,
      cost,
      evaluate: () => {
        const until = performance.now() + ms;
        while (performance.now() < until);
        return { matched: true, reads: {}, cap: null };
      },
    };
  }

  const watching = () => {
    const seen = { within: 0, exceeded: [] as number[] };
    const guard: RuleGuard = { within: () => void seen.within++, exceeded: (_r, ms) => void seen.exceeded.push(ms) };
    return { seen, guard };
  };

  test('a rule over the budget does not match, is reported as an error and to the guard', () => {
    const { seen, guard } = watching();
    const errors: string[] = [];
    const verdict = evaluateRules(
      [slow(RULE_LIMITS.runtimeBudgetMs * 4, RULE_LIMITS.maxCost)],
      facts(),
      'approve',
      lookup,
      (_r, e) => errors.push(e),
      guard,
    );
    assert.equal(verdict.outcome, 'approve');
    assert.deepEqual(verdict.rules, []);
    assert.equal(seen.exceeded.length, 1);
    assert.ok(seen.exceeded[0]! > RULE_LIMITS.runtimeBudgetMs);
    assert.match(errors[0]!, /over the budget of 5 ms/);
  });

  test('a rule whose estimate cannot reach the budget is not timed (it pays nothing for the guard)', () => {
    const { seen, guard } = watching();
    const verdict = evaluateRules(
      [slow(0, RULE_LIMITS.timedFromCost - 1)],
      facts(),
      'approve',
      lookup,
      undefined,
      guard,
    );
    assert.equal(verdict.outcome, 'decline');
    assert.equal(seen.within + seen.exceeded.length, 0);
    evaluateRules([slow(0, RULE_LIMITS.timedFromCost)], facts(), 'approve', lookup, undefined, guard);
    assert.equal(seen.within, 1);
  });
});

describe('reads are bounded', () => {
  test('a long string read is cut with its length, a large list replaced by its size, and the decision keeps at most 16 KiB of reads', () => {
    const long = 'n'.repeat(1_000);
    const items = Array.from({ length: 100 }, (_, i) => `item-${i}-${'x'.repeat(20)}`);
    const readers = Array.from({ length: 100 }, (_, i) =>
      rule({ name: `r${i}`, condition: `context.note != "" && size(context.items) > ${i % 3}`, action: 'review' }),
    );
    const verdict = evaluateRules(readers, facts({ context: { note: long, items } }), 'approve', lookup);
    const first = verdict.rules[0]!.reads;
    assert.equal(first['context.note'], `${'n'.repeat(256)}…[1000 characters]`);
    assert.match(String(first['context.items']), /^\[list of \d+ characters\]$/);
    const kept = JSON.stringify(verdict.rules.map((r) => r.reads)).length;
    assert.ok(kept < 16_384 + 100 * 120, `${kept} characters of reads`);
    assert.match(JSON.stringify(verdict.rules.at(-1)!.reads), /over the decision's reads budget/);
  });
});
