// The policy's outcome fields (docs/rules.md, "Outcomes"; docs/api.md, "Reviews"): optional, with
// defaults, checked where every policy document is checked, and the review a score's outcome opens.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_POLICY, type Policy } from '../../src/model/policy.ts';
import { validatePolicy } from '../../src/model/policy-document.ts';
import { outcomesOf, reviewHoursOf, reviewSampleRateOf } from '../../src/model/outcome-policy.ts';
import { amountRef, entityFacts, reviewOpening } from '../../src/trust/rule-facts.ts';
import type { EntityProfile } from '../../src/model/types.ts';

const HOUR = 3_600_000;
const withFields = (fields: Record<string, unknown>) => ({
  ...structuredClone(DEFAULT_POLICY),
  version: 'o-1',
  ...fields,
});

test('absent fields are the defaults; given members override only themselves', () => {
  assert.deepEqual(outcomesOf(DEFAULT_POLICY), {
    low: 'approve',
    medium: 'approve',
    high: 'review',
    critical: 'decline',
  });
  assert.deepEqual(reviewHoursOf(DEFAULT_POLICY), { review: 24, hold: 4 });
  assert.equal(reviewSampleRateOf(DEFAULT_POLICY), 0);
  const p = validatePolicy(
    withFields({ outcomes: { high: 'hold' }, reviewHours: { hold: 2 }, reviewSampleRate: 0.02 }),
  );
  assert.deepEqual(outcomesOf(p), { low: 'approve', medium: 'approve', high: 'hold', critical: 'decline' });
  assert.deepEqual(reviewHoursOf(p), { review: 24, hold: 2 });
  assert.equal(reviewSampleRateOf(p), 0.02);
});

test('invalid outcome fields are refused, each naming its field', () => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ outcomes: { high: 'block' } }, /\/outcomes\/high/],
    [{ outcomes: { severe: 'decline' } }, /\/outcomes\/severe: unknown field/],
    [
      { outcomes: { medium: 'decline', high: 'review' } },
      /\/outcomes\/high: must be at least as severe as outcomes.medium/,
    ],
    [{ outcomes: { low: 'hold' } }, /\/outcomes\/medium: must be at least as severe/],
    [{ reviewHours: { review: 0 } }, /\/reviewHours\/review/],
    [{ reviewHours: { hold: 721 } }, /\/reviewHours\/hold/],
    [{ reviewHours: { sample: 3 } }, /\/reviewHours\/sample: unknown field/],
    [{ reviewSampleRate: 1.5 }, /\/reviewSampleRate/],
    [{ reviewSampleRate: -0.1 }, /\/reviewSampleRate/],
  ];
  for (const [fields, message] of cases)
    assert.throws(() => validatePolicy(withFields(fields)), message, JSON.stringify(fields));
  assert.doesNotThrow(() =>
    validatePolicy(
      withFields({
        outcomes: { low: 'review', medium: 'review', high: 'hold', critical: 'hold' },
        reviewHours: { review: 720, hold: 0.5 },
        reviewSampleRate: 1,
      }),
    ),
  );
});

test('reviewOpening: review and hold by outcome, approvals by sample, declines never', () => {
  const now = 1_800_000_000_000;
  const policy = withFields({ reviewHours: { review: 10, hold: 3 }, reviewSampleRate: 0.25 }) as Policy;
  assert.deepEqual(
    { ...reviewOpening(policy, 'hold', now), id: 'x' },
    { id: 'x', outcome: 'hold', reason: 'outcome', sample_rate: null, due_at: now + 3 * HOUR },
  );
  assert.deepEqual(
    { ...reviewOpening(policy, 'review', now), id: 'x' },
    { id: 'x', outcome: 'review', reason: 'outcome', sample_rate: null, due_at: now + 10 * HOUR },
  );
  assert.match(reviewOpening(policy, 'review', now)!.id, /^rev_/);
  assert.equal(
    reviewOpening(policy, 'decline', now, () => 0),
    null,
  );
  assert.deepEqual(
    { ...reviewOpening(policy, 'approve', now, () => 0.2), id: 'x' },
    { id: 'x', outcome: 'approve', reason: 'sample', sample_rate: 0.25, due_at: now + 10 * HOUR },
  );
  assert.equal(
    reviewOpening(policy, 'approve', now, () => 0.25),
    null,
    'drawn at or above the rate: not sampled',
  );
  assert.equal(
    reviewOpening(DEFAULT_POLICY, 'approve', now, () => 0),
    null,
    'rate 0 never samples',
  );
});

test('entity facts and amount_ref', () => {
  const now = Date.parse('2026-11-27T00:00:00Z');
  const profile = {
    known: true,
    firstSeenAt: now - 2.5 * 86_400_000,
    tradesCompleted: 4,
    chargebacks: 1,
    fraudReports: Number.NaN,
    disputesLost: -1,
  } as unknown as EntityProfile;
  assert.deepEqual(entityFacts(profile, now), {
    account_age_days: 2.5,
    completed_trades: 4,
    chargebacks: 1,
    fraud_reports: 0,
    disputes_lost: 0,
    first_seen_at: '2026-11-24T12:00:00.000Z',
  });
  assert.deepEqual(entityFacts({ ...profile, known: false, firstSeenAt: null }, now).first_seen_at, null);
  assert.equal(amountRef(DEFAULT_POLICY, 2000, 'USD'), 2);
  assert.equal(amountRef(DEFAULT_POLICY, 0.02, 'BTC'), 2);
  assert.equal(amountRef(DEFAULT_POLICY, 10, 'SEK'), null);
});
