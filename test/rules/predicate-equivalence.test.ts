// Compiled predicates answer as cel-js does (issue 42; src/rules/predicate.ts): random conditions of
// the compiled shapes over random activations — missing members, nulls, wrong kinds, large ints,
// NaN — give the same match, no-match or error, the same in_list calls, and through a compiled
// rule the same evaluation (reads, cap and error message) as the rule kept in cel-js.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ruleEnvironment, runProgram, type InListCall } from '../../src/rules/cel-env.ts';
import { checkExpression } from '../../src/rules/check-expression.ts';
import { compileRule, isCompiledPredicate } from '../../src/rules/compile.ts';
import { compilePredicate, FAILED } from '../../src/rules/predicate.ts';
import { LazyActivation } from '../../src/rules/predicate-activation.ts';
import type { RuleFacts } from '../../src/model/outcomes.ts';

const SIGNALS = ['s1', 's2'];
const renv = ruleEnvironment(SIGNALS);

const FIELDS = [
  'entity_id',
  'amount',
  'currency',
  'amount_ref',
  'score',
  'risk_level',
  'safe_amount',
  'context.a',
  'context.b',
  'context.country',
  'entity.account_age_days',
  'entity.chargebacks',
  'entity.first_seen_at',
  'signals.s1',
  'signals.s2',
];
const HAS = ['context.a', 'context.b', 'context.country', 'entity.chargebacks', 'entity.first_seen_at', 'signals.s1'];
const LITERALS = [
  '0',
  '1',
  '-1',
  '1000',
  '9007199254740993',
  '1152921504606846977',
  '0.5',
  '1.0',
  '-2.5',
  '1000.0',
  '1e300',
  '9007199254740992.0',
  '"a"',
  '"NG"',
  '"card"',
  '""',
  'null',
  'true',
  'false',
];
const OPS = ['==', '!=', '<', '<=', '>', '>='];

const field = fc.constantFrom(...FIELDS);
const lit = fc.constantFrom(...LITERALS);
const operand = fc.oneof({ arbitrary: field, weight: 3 }, { arbitrary: lit, weight: 2 });

const leaf: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(operand, fc.constantFrom(...OPS), operand).map(([l, op, r]) => `${l} ${op} ${r}`),
  fc.tuple(field, fc.array(lit, { maxLength: 4 })).map(([f, items]) => `${f} in [${items.join(', ')}]`),
  fc
    .tuple(field, fc.uniqueArray(fc.constantFrom('"a"', '"NG"', '"card"', '"GH"'), { maxLength: 4 }))
    .map(([f, items]) => `${f} in [${items.join(', ')}]`),
  fc.tuple(fc.constantFrom('l1', 'l2'), field).map(([l, f]) => `in_list("${l}", ${f})`),
  fc.constantFrom(...HAS).map((f) => `has(${f})`),
  fc.constantFrom('true', 'false', 'context.a', 'amount_ref'),
);

const condition: fc.Arbitrary<string> = fc.letrec((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { arbitrary: leaf, weight: 3 },
    tie('expr').map((e) => `!(${e as string})`),
    fc
      .tuple(tie('expr'), fc.constantFrom('&&', '||'), tie('expr'))
      .map(([l, op, r]) => `(${l as string} ${op} ${r as string})`),
  ),
})).expr as fc.Arbitrary<string>;

const value = fc.oneof(
  fc.constantFrom('a', 'NG', 'card', '', 'GH'),
  fc.constantFrom(0, 1, -1, 0.5, 1000, 2 ** 53, 2 ** 60, Number.NaN, Infinity, 9007199254740992),
  fc.double(),
  fc.constantFrom(1n, 2n ** 60n + 1n, 9007199254740993n, -5n),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom([1], ['a'], { x: 1 }, {}),
);
const maybe = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(a, { nil: undefined, freq: 4 });

const facts: fc.Arbitrary<RuleFacts> = fc
  .record({
    entity_id: maybe(fc.oneof(fc.constantFrom('a', 'NG', 'ent_1'), value)),
    amount: fc.oneof(fc.double(), value),
    currency: maybe(fc.oneof(fc.constantFrom('USDT', 'a'), value)),
    amount_ref: maybe(fc.oneof(fc.double(), fc.constant(null), value)),
    context: fc.dictionary(fc.constantFrom('a', 'b', 'country', 'z', 'constructor'), maybe(value)),
    entity: fc.record(
      {
        account_age_days: fc.oneof(fc.double(), value),
        chargebacks: fc.oneof(fc.double(), value),
        first_seen_at: fc.oneof(fc.constantFrom('2026-01-01T00:00:00Z', 'a'), value),
      },
      { requiredKeys: [] },
    ),
    signals: fc.dictionary(fc.constantFrom('s1', 's2', 'other', 'constructor'), maybe(value)),
    score: fc.oneof(fc.double(), value),
    risk_level: maybe(fc.oneof(fc.constantFrom('low', 'high'), value)),
    safe_amount: maybe(fc.oneof(fc.double(), fc.constant(null), value)),
  })
  .map((f) => f as unknown as RuleFacts);

const ON_LISTS = new Set(['a', 'NG']);
const lookup = (name: string, v: string): boolean => name === 'l1' && ON_LISTS.has(v);

type Answer = boolean | 'error' | 'deferred';

function celAnswer(program: Parameters<typeof runProgram>[0], f: RuleFacts, log: InListCall[]): Answer {
  try {
    const v = runProgram(program, new LazyActivation(f, renv.signalDefaults), lookup, log);
    return typeof v === 'boolean' ? v : 'error';
  } catch {
    return 'error';
  }
}

function checked(source: string) {
  return checkExpression(renv, 'condition', source, 'bool').checked;
}

describe('compiled predicates and cel-js', () => {
  test('every condition of the compiled shapes that checks is compiled, and answers as cel-js', () => {
    let compared = 0;
    let answered = 0;
    fc.assert(
      fc.property(condition, fc.array(facts, { minLength: 1, maxLength: 6 }), (source, samples) => {
        const c = checked(source);
        if (!c) return; // a random shape that does not type-check (`amount == "a"`) is refused when saved
        const predicate = compilePredicate(c.program.ast, SIGNALS);
        assert.ok(predicate, `not compiled: ${source}`);
        for (const f of samples) {
          const celLog: InListCall[] = [];
          const expected = celAnswer(c.program, f, celLog);
          const log: InListCall[] = [];
          let got: Answer;
          try {
            const v: unknown = predicate(new LazyActivation(f, renv.signalDefaults), lookup, log);
            got = v === FAILED ? 'error' : (v as boolean);
          } catch {
            got = 'deferred';
          }
          compared++;
          if (got === 'deferred') continue;
          answered++;
          assert.equal(got, expected, `${source} over ${show(f)}`);
          if (got !== 'error') assert.deepEqual(log, celLog, `in_list calls of ${source}`);
        }
      }),
      { numRuns: 4_000 },
    );
    // the closures answer most evaluations themselves; they step aside only for a map or list operand
    assert.ok(answered > compared * 0.7, `${answered} of ${compared} answered`);
  });

  test('a compiled rule evaluates exactly as the same rule in cel-js: match, reads, cap and error', () => {
    fc.assert(
      fc.property(condition, facts, (source, f) => {
        if (!checked(source)) return;
        const body = { name: 'r', condition: source, action: 'review' as const, cap: 'amount * 0.5' };
        const stored = { id: 'rul_1', version: 1, status: 'active' as const, body };
        const fast = compileRule(stored, SIGNALS);
        const slow = compileRule(stored, SIGNALS, { predicates: false });
        assert.ok(isCompiledPredicate(fast) && !isCompiledPredicate(slow));
        assert.deepEqual(fast.evaluate(f, lookup), slow.evaluate(f, lookup), `${source} over ${show(f)}`);
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('comparisons at the int and double boundary, every pair', () => {
  const NUMBERS = [
    0,
    1,
    -1,
    0.5,
    2 ** 53,
    2 ** 53 + 2,
    2 ** 60,
    Number.NaN,
    -Infinity,
    1e300,
    2n ** 60n + 1n,
    9007199254740993n,
  ];
  const KINDS: unknown[] = [...NUMBERS, 'a', true, null];
  const SHAPES = ['context.a', 'amount_ref', 'amount', 'signals.s1', 'entity.chargebacks', 'safe_amount'];
  test('each field against each literal, with each value, as cel-js answers', () => {
    let answered = 0;
    for (const shape of SHAPES)
      for (const op of [...OPS, 'in'])
        for (const literal of LITERALS) {
          const source = op === 'in' ? `${shape} in [${literal}]` : `${shape} ${op} ${literal}`;
          const c = checked(source);
          if (!c) continue;
          const predicate = compilePredicate(c.program.ast, SIGNALS)!;
          for (const v of KINDS) {
            const f = {
              amount: v,
              amount_ref: v,
              safe_amount: v,
              context: { a: v },
              entity: { chargebacks: v },
              signals: { s1: v },
            } as unknown as RuleFacts;
            const expected = celAnswer(c.program, f, []);
            const got = predicate(new LazyActivation(f, renv.signalDefaults), lookup, []);
            assert.equal(got === FAILED ? 'error' : got, expected, `${source} with ${String(v)}`);
            answered++;
          }
        }
    assert.ok(answered > 1_000, `${answered} compared`);
  });
});

function show(f: RuleFacts): string {
  return JSON.stringify(f, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v === undefined ? '<undefined>' : v));
}
