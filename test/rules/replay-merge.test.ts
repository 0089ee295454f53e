// docs/rules.md, "Testing a rule": a test's window is replayed in slices by two workers and the
// slices' tallies merged in the window's order; whatever the cut, the figures, notes and examples
// are the ones one pass over the whole window gives.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ListHistory, type ListEntryRow } from '../../src/rules/replay-lists.ts';
import { RuleTestTally, type ReplayRow, type ReplaySettings } from '../../src/rules/replay.ts';
import { mergeParts } from '../../src/rules/replay-merge.ts';
import { slicesOf } from '../../src/rules/replay-thread.ts';
import { columnsRead } from '../../src/rules/replay-columns.ts';
import { compileRule } from '../../src/rules/compile.ts';
import { evaluateRules } from '../../src/rules/decide.ts';
import { SIGNAL_NAMES } from '../../src/model/policy.ts';

const T0 = Date.UTC(2026, 9, 1);
const HOUR = 3_600_000;
const settings: ReplaySettings = {
  outcomes: { low: 'approve', medium: 'approve', high: 'review', critical: 'decline' },
  signalNames: SIGNAL_NAMES,
  disputePrior: { alpha: 1, beta: 9 },
};
const LEVELS = ['low', 'medium', 'high', 'critical'];
const CURRENCIES = ['USDT', 'EUR', 'BTC'];
const mules: ListEntryRow[] = [
  {
    list: 'mules',
    value: 'ent-1',
    added_at: T0 + 5 * HOUR,
    removed_at: T0 + 30 * HOUR,
    expires_at: null,
    list_deleted_at: null,
  },
];
const condition =
  '(amount > 300.0 && context.side == "buy") || in_list("mules", entity_id) || signals.velocity_trades > 2.0 || (safe_amount != null && safe_amount < 20.0)';

const decision = fc.record({
  amount: fc.integer({ min: 1, max: 100_000 }).map((c) => c / 100),
  currency: fc.constantFrom(...CURRENCIES),
  level: fc.constantFrom(...LEVELS),
  entity: fc.integer({ min: 0, max: 3 }),
  side: fc.constantFrom('buy', 'sell'),
  velocity: fc.integer({ min: 0, max: 4 }),
  label: fc.constantFrom(null, 'fraud', 'legit'),
  inputs: fc.boolean(),
  stored: fc.constantFrom('none', 'final', 'hold'),
});

function rowsOf(specs: Array<typeof decision extends fc.Arbitrary<infer T> ? T : never>): ReplayRow[] {
  return specs.map((d, i) => ({
    id: `dec_${String(i).padStart(4, '0')}`,
    subject_id: `ent-${d.entity}`,
    created_at: T0 + i * HOUR,
    request: JSON.stringify({ amount: d.amount, currency: d.currency, side: d.side }),
    features: JSON.stringify({ velocity_trades: d.velocity }),
    feature_set: 3,
    result: JSON.stringify({ entity_id: 'x', score: 50, risk_level: d.level, signals: [], safe_amount: d.amount / 10 }),
    risk_level: d.level,
    outcome: d.stored === 'final' ? 'decline' : d.stored === 'hold' ? 'hold' : settings.outcomes[d.level]!,
    rules:
      d.stored === 'none'
        ? null
        : JSON.stringify([
            {
              id: 'rul_o',
              name: 'o',
              version: 1,
              action: d.stored === 'final' ? 'decline' : 'hold',
              final: true,
              reads: {},
            },
          ]),
    label: d.label,
    rule_inputs: d.inputs
      ? JSON.stringify({ amount_ref: d.amount / 100, context: { side: d.side }, entity: {}, safe_amount: d.amount / 5 })
      : null,
  }));
}

const tallyOf = (rows: readonly ReplayRow[]) => {
  const body = { name: 'r', action: 'review' as const, condition };
  const rule = compileRule({ id: 'rul_t', version: 1, status: 'active', body }, SIGNAL_NAMES);
  const t = new RuleTestTally(rule, new ListHistory(mules), settings, evaluateRules, columnsRead(body).safeAmount);
  for (const r of rows) t.add(r);
  return t;
};

describe('a window replayed in slices', () => {
  test('slices merged in order give what one pass gives, wherever the window is cut', () => {
    fc.assert(
      fc.property(
        fc.array(decision, { maxLength: 70 }),
        fc.array(fc.integer({ min: 0, max: 70 }), { maxLength: 6 }),
        (specs, cuts) => {
          const rows = rowsOf(specs);
          const at = [...new Set(cuts.map((c) => Math.min(c, rows.length)))].sort((a, b) => a - b);
          const bounds = [0, ...at, rows.length];
          const parts = bounds.slice(1).map((end, i) => tallyOf(rows.slice(bounds[i], end)).part());
          assert.deepEqual(mergeParts(parts, parts[0]!.lists), tallyOf(rows).result());
        },
      ),
      { numRuns: 60 },
    );
  });

  test('the slices of a window cover it exactly, consecutive and in order', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1e12 }),
        fc.integer({ min: 1, max: 1e9 }),
        fc.integer({ min: 1, max: 20 }),
        (since, span, n) => {
          const slices = slicesOf({ since, until: since + span, owner: 'c' }, n);
          assert.equal(slices.length, Math.min(n, span));
          assert.equal(slices[0]!.since, since);
          assert.equal(slices.at(-1)!.until, since + span);
          for (const [i, s] of slices.entries()) {
            assert.ok(s.since < s.until);
            assert.equal(s.owner, 'c');
            if (i > 0) assert.equal(s.since, slices[i - 1]!.until);
          }
        },
      ),
    );
  });
});
