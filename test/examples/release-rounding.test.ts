// Issue 29, item 19: examples/score-before-release.ts printed `held: 1635.7293968499998` (2500 minus
// a safe_amount, in floating point). The release and the hold are counted in the currency's minor units.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { minorUnitDigits, splitRelease } from '../../examples/score-before-release.ts';

test('the README run: 2500 USDT against a safe_amount of 864.27060315 holds 1635.72939685', () => {
  assert.deepEqual(splitRelease(2500, 864.27060315, 'USDT'), { release: 864.27060315, held: 1635.72939685 });
  assert.deepEqual(splitRelease(500, 399.18, 'USD'), { release: 399.18, held: 100.82 });
  assert.deepEqual(
    splitRelease(1000, 333.5, 'JPY'),
    { release: 333, held: 667 },
    'the release is rounded down: never above safe_amount',
  );
  assert.deepEqual(splitRelease(250, null, 'EUR'), { release: 250, held: 0 });
  assert.deepEqual(
    [minorUnitDigits('USDT'), minorUnitDigits('USD'), minorUnitDigits('JPY'), minorUnitDigits('KWD')],
    [8, 2, 0, 3],
  );
});

test('for any amount and safe_amount on the grid: release ≤ safe_amount, both on the grid, adding up to the amount', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 10 ** 12 }),
      fc.integer({ min: 0, max: 10 ** 12 }),
      fc.constantFrom('USDT', 'USD', 'JPY', 'BHD'),
      (amountUnits, safeUnits, currency) => {
        const scale = 10 ** minorUnitDigits(currency);
        const amount = amountUnits / scale;
        const safe = safeUnits / scale;
        const { release, held } = splitRelease(amount, safe, currency);
        assert.ok(release <= safe && release <= amount);
        assert.equal(release, Math.min(amount, safe), 'a cap already on the grid is released as it is');
        assert.equal(Math.round(release * scale) + Math.round(held * scale), amountUnits);
        assert.equal(held, (amountUnits - Math.round(release * scale)) / scale);
      },
    ),
  );
});
