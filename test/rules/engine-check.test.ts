// Save-time refusals (docs/rules.md, "Limits"): each names its field and where, and the malicious
// set is refused when saved or, when it is legal CEL, stays cheap and safe when run.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkRule, compileRule, listsNamed, type RuleBody } from '../../src/rules/compile.ts';
import { SIGNAL_NAMES } from '../../src/model/policy.ts';
import { LISTS, facts, lookup, rule } from './engine-support.ts';

const check = (condition: string, more: Partial<RuleBody> = {}) =>
  checkRule({ name: 'r', condition, action: 'hold', ...more }, SIGNAL_NAMES, LISTS);

function refused(
  condition: string,
  pattern: RegExp,
  at?: { line: number; column: number },
  more: Partial<RuleBody> = {},
) {
  const problems = check(condition, more);
  assert.equal(problems.length, 1, JSON.stringify(problems));
  const [p] = problems;
  assert.equal(p!.field, 'condition');
  assert.match(p!.message, pattern);
  if (at) {
    assert.equal(p!.line, at.line);
    assert.equal(p!.column, at.column);
    assert.match(p!.message, new RegExp(`^line ${at.line}, column ${at.column}: `));
  }
}

describe('valid rules check', () => {
  for (const c of [
    'amount > 1000 && context.payment_method == "card"',
    'has(context.country) && in_list("high_risk_countries", context.country)',
    'entity.completed_trades == 0 && amount_ref != null && amount_ref > 2',
    'signals.velocity_trades > 0.5 || score >= 80',
    'amount * 2 > safe_amount',
    'risk_level in ["high", "critical"]',
    're2_matches(entity_id, "^ent_[a-z]+[0-9]$")',
    'context.items.exists(i, i > 100)',
    'entity.first_seen_at == null || currency == "USDT"',
  ]) {
    test(c, () => assert.deepEqual(check(c), []));
  }
});

describe('refused when saved, with field and position', () => {
  test('a syntax error', () => refused('amount >', /unexpected token/, { line: 1, column: 9 }));
  test('an unknown variable, on the second line', () =>
    refused('amount > 1000 &&\n  amout < 5', /unknown variable: amout/, { line: 2, column: 3 }));
  test('every clause that fails on its own, each at its place, in one style', () =>
    assert.deepEqual(
      check('nope > 1 && amount > "x" || other < 2').map((p) => p.message),
      [
        'line 1, column 1: unknown variable: nope',
        'line 1, column 13: no such overload: double > string',
        'line 1, column 29: unknown variable: other',
      ],
    ));
  test('a literal a variable of fixed values never holds (a method the score request does not accept)', () =>
    assert.deepEqual(
      check('context.payment_method in ["card", "paypal"] || context.payment_method == "cash"').map((p) => p.message),
      [
        'line 1, column 36: context.payment_method is never "paypal": it is one of bank_transfer, card, mobile_money, cash, e_wallet, crypto, other',
      ],
    ));
  test('an unknown entity field', () => refused('entity.age > 3', /age/, { line: 1, column: 8 }));
  test('an unknown signal', () => refused('signals.velocity > 0.5', /velocity/, { line: 1, column: 9 }));
  test('a type error', () => refused('amount + "x" == "y"', /overload|type/i, { line: 1, column: 1 }));
  test('a non-bool condition', () =>
    refused('amount', /must return a bool, but returns double/, { line: 1, column: 1 }));
  test('a dyn condition', () => refused('context.vip', /must return a bool, but returns dyn/));
  test('too long', () => refused(`amount > 1 || ${'score > 1 || '.repeat(200)}true`, /characters long; at most 2000/));
  test('too deep for the parser', () =>
    refused(`${'('.repeat(40)}true${')'.repeat(40)}`, /maxDepth/, { line: 1, column: 33 }));
  test('too many nodes', () => refused(`${'-'.repeat(1990)}1.0 > 0.0`, /maxAstNodes/));
  test('a list literal over 100 items', () =>
    refused(`amount in [${Array.from({ length: 101 }, (_, i) => `${i}.0`).join(',')}]`, /maxListElements/));
  test('matches (JS RegExp, can backtrack for minutes)', () =>
    refused('entity_id.matches("^(a+)+$")', /re2_matches/, { line: 1, column: 1 }));
  test('matches as a function', () =>
    refused('true && matches(entity_id, "a")', /re2_matches/, { line: 1, column: 9 }));
  test('a nested comprehension', () =>
    refused('context.items.exists(a, context.items.exists(b, a == b))', /inside another/, { line: 1, column: 25 }));
  test('a nested comprehension inside a map body', () =>
    refused('context.items.map(a, context.items.filter(b, b > a)).size() > 0', /inside another/));
  test('prototype access by member', () =>
    refused('has(context.__proto__)', /'__proto__' cannot be read/, { line: 1, column: 5 }));
  test('prototype access by index', () => refused('context["constructor"] == 1', /'constructor' cannot be read/));
  test('a prototype map key', () =>
    refused('{"__proto__": 1}.size() == 1', /cannot be a map key/, { line: 1, column: 2 }));
  test('deep cel.bind', () =>
    refused('cel.bind(a, entity_id + entity_id, cel.bind(b, a + a, cel.bind(c, b + b, c.size() > 9)))', /cel.bind/));
  test('in_list with a computed name', () =>
    refused('in_list(currency, entity_id)', /string literal/, { line: 1, column: 9 }));
  test('in_list naming no list', () =>
    refused('amount > 1 && in_list("muels", entity_id)', /no list named "muels"/, { line: 1, column: 23 }));
  test('re2_matches with a computed pattern', () =>
    refused('re2_matches(entity_id, currency)', /pattern as a string literal/, { line: 1, column: 24 }));
  test('re2_matches with an invalid pattern', () =>
    refused('re2_matches(entity_id, "(a")', /invalid RE2 pattern/, { line: 1, column: 24 }));
  test('re2_matches with a backreference (not RE2)', () =>
    refused('re2_matches(entity_id, "(a)\\\\1")', /invalid RE2 pattern/));
});

describe('the other fields', () => {
  const field = (body: Partial<RuleBody>) =>
    checkRule({ name: 'r', condition: 'true', ...body }, SIGNAL_NAMES, LISTS).map((p) => p.field);
  test('neither action nor cap', () => assert.deepEqual(field({}), ['action']));
  test('an unknown action', () => assert.deepEqual(field({ action: 'block' as never }), ['action']));
  test('override only on approve', () => assert.deepEqual(field({ action: 'review', override: true }), ['override']));
  test('final only on decline', () => assert.deepEqual(field({ action: 'hold', final: true }), ['final']));
  test('a cap alone is a rule', () => assert.deepEqual(field({ cap: 200 }), []));
  test('a negative cap', () => assert.deepEqual(field({ cap: -1 }), ['cap']));
  test('a cap expression must be a number', () => {
    const problems = checkRule({ name: 'r', condition: 'true', cap: 'currency' }, SIGNAL_NAMES, LISTS);
    assert.deepEqual(
      problems.map((p) => [p.field, p.line, p.column]),
      [['cap', 1, 1]],
    );
    assert.match(problems[0]!.message, /must return a number, but returns string/);
  });
  test('a cap expression with an unknown variable names cap and where', () => {
    const problems = checkRule({ name: 'r', condition: 'true', cap: 'amount * limit' }, SIGNAL_NAMES, LISTS);
    assert.deepEqual(
      problems.map((p) => [p.field, p.line, p.column]),
      [['cap', 1, 10]],
    );
  });
  test('compileRule throws on a body that does not check', () => {
    assert.throws(
      () =>
        compileRule(
          { id: 'rul_x', version: 2, status: 'active', body: { name: 'r', condition: 'amount >', action: 'hold' } },
          SIGNAL_NAMES,
        ),
      /rul_x v2 does not check: condition: line 1/,
    );
  });
  test('listsNamed', () => {
    assert.deepEqual(
      listsNamed(
        'in_list("mules", entity_id) || in_list("high_risk_countries", context.country) || in_list("mules", currency)',
      ),
      ['mules', 'high_risk_countries'],
    );
    assert.deepEqual(listsNamed('amount >'), []);
  });
});

describe('the malicious set', () => {
  test('3,000 nested parentheses are refused by length before any parsing', () => {
    refused(`${'('.repeat(3000)}true${')'.repeat(3000)}`, /characters long/);
  });
  test('1,000 nested parentheses (within the length) are refused by depth, without overflowing the stack', () => {
    refused(`${'('.repeat(990)}true${')'.repeat(990)}`, /maxDepth/);
  });
  test('a 100,000-element literal is refused by length; a 900-element one by maxListElements', () => {
    refused(`size([${Array(100_000).fill('1').join(',')}]) > 0`, /characters long/);
    refused(`size([${Array(900).fill('1').join(',')}]) > 0`, /maxListElements/);
  });
  test('a long operator chain within the length is refused by the tree depth', () => {
    refused(
      `${Array(200).fill('score > 1.0').join(' || ')}`.slice(0, 2000).replace(/ \|\| [^|]*$/, ''),
      /nested deeper than|maxAstNodes/,
    );
  });
  test('three nested comprehensions are refused', () => {
    refused('context.items.all(a, context.items.all(b, context.items.all(c, a + b + c > 0)))', /inside another/);
  });
  test('a comprehension over a 100-item literal with a 100-item literal inside stays cheap when run', () => {
    const hundred = `[${Array.from({ length: 100 }, (_, i) => `${i}`).join(',')}]`;
    const r = rule({ condition: `${hundred}.map(x, ${hundred}.size() * x).size() == 100`, action: 'review' });
    assert.deepEqual(r.evaluate(facts(), lookup), { matched: true, reads: {}, cap: null });
  });
  test('re2_matches on a catastrophic-for-backtracking pattern answers (linear time)', () => {
    const r = rule({ condition: 're2_matches(context.payload, "^(a+)+$")', action: 'review' });
    const out = r.evaluate(facts({ context: { payload: `${'a'.repeat(5000)}!` } }), lookup);
    assert.deepEqual(out, { matched: false, reads: {}, cap: null });
    assert.equal(r.evaluate(facts({ context: { payload: 'aaaa' } }), lookup).matched, true);
  });
  test('a context member named __proto__ reads as an ordinary member or not at all', () => {
    const r = rule({ condition: 'context.size() == 2 && has(context.a)', action: 'review' });
    const polluted = JSON.parse('{"a": 1, "__proto__": {"polluted": true}}') as Record<string, unknown>;
    assert.equal(r.evaluate(facts({ context: polluted }), lookup).matched, true);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});
