// The model's signals and score against the reference written from docs/signals.md
// (test/helpers/reference-model.ts): the plain computation, with its own rounding, order, sum and
// amount signals.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { computeSignals, scoreEntity } from '../../src/model/signal-model.ts';
import type { EntityProfile, ScoreRequest } from '../../src/model/types.ts';
import type { Policy } from '../../src/model/policy.ts';
import { anyPolicy, NOW, profileArb, requestArb } from '../helpers/profiles.ts';
import { marketPolicyArb, marketProfileArb } from '../helpers/market-profiles.ts';
import { referenceComputeSignals } from '../helpers/reference-model.ts';

function sameAsReference(p: EntityProfile, r: ScoreRequest, policy: Policy): void {
  const expected = referenceComputeSignals(p, r, policy, NOW);
  assert.deepStrictEqual(computeSignals(p, r, policy, NOW), expected);
  const result = scoreEntity(p, r, policy, NOW);
  assert.deepStrictEqual(result.signals, expected);
  let z = policy.bias;
  for (const s of expected) z += s.weight * s.value;
  assert.equal(result.score, Math.round(100 / (1 + Math.exp(-z))));
}

describe('the model against the reference written from the docs', () => {
  test('any profile and policy: the same signals, descriptions and score', () => {
    fc.assert(fc.property(profileArb, requestArb, anyPolicy, sameAsReference), { numRuns: 1000 });
  });

  test('entities as a marketplace shows them (clean ones, tier limits, histories of plausible spread)', () => {
    fc.assert(fc.property(marketProfileArb, requestArb, marketPolicyArb, sameAsReference), { numRuns: 1000 });
  });
});
