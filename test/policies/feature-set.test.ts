// Stored feature vectors across the change of dispute_rate's definition (issue 18 item 12): the
// first definition scored the prior's mean as risk; vectors stored under it (feature_set null)
// are translated when fitted or replayed, never rewritten.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_POLICY, SIGNAL_NAMES, type Policy } from '../../src/model/policy.ts';
import { decodeFeatures, FEATURE_SET, replayableFeatures, type FeatureRecord } from '../../src/model/feature-vector.ts';
import { backtestFromStore } from '../../src/policies/service.ts';
import { describeEachBackend } from '../helpers/app.ts';
import { hash, score } from '../helpers/trust.ts';

const PRIOR = DEFAULT_POLICY.disputePrior;
const zeros = (): FeatureRecord => Object.fromEntries(SIGNAL_NAMES.map((n) => [n, 0]));

describe('replayableFeatures', () => {
  test('a first-definition vector loses the prior mean, floored at 0; the stored record is untouched', () => {
    const newcomer = { ...zeros(), dispute_rate: 0.1, cold_start: 1 };
    assert.equal(replayableFeatures(newcomer, null, PRIOR).dispute_rate, 0);
    assert.equal(newcomer.dispute_rate, 0.1, 'the stored record was modified');
    // 4 lost of 10 trades: 0.25 then, 0.15 now
    assert.equal(replayableFeatures({ ...zeros(), dispute_rate: 0.25 }, null, PRIOR).dispute_rate, 0.15);
    assert.equal(replayableFeatures({ ...zeros(), dispute_rate: 0.25 }, 1, { alpha: 1, beta: 4 }).dispute_rate, 0.05);
    assert.equal(
      replayableFeatures({ cold_start: 1 }, null, PRIOR).dispute_rate,
      undefined,
      'a missing value stays missing (it counts as 0)',
    );
  });

  test('a vector stored before the household allowance (feature_set 1 or 2): ring_size loses the household; set 2 keeps its dispute_rate', () => {
    // 5 accounts within two hops: log2(6) then, log2(1 + 5 − 2) = 2 now; 2 accounts: 1.585 then, 0 now.
    const five = { ...zeros(), dispute_rate: 0.15, ring_size: 2.585 };
    assert.deepEqual(replayableFeatures(five, 2, PRIOR), { ...five, ring_size: 2 });
    assert.equal(replayableFeatures({ ...zeros(), ring_size: 1.585 }, 2, PRIOR).ring_size, 0);
    assert.equal(
      replayableFeatures({ ...zeros(), dispute_rate: 0.25, ring_size: 2.585 }, null, PRIOR).dispute_rate,
      0.15,
    );
    assert.equal(replayableFeatures({ ...zeros(), ring_size: 2.585 }, null, PRIOR).ring_size, 2);
    assert.equal(five.ring_size, 2.585, 'the stored record was modified');
  });

  test('a current-definition vector is replayed as stored', () => {
    const current = { ...zeros(), dispute_rate: 0.15 };
    assert.equal(replayableFeatures(current, FEATURE_SET, PRIOR), current);
  });
});

describeEachBackend('stored feature vectors and their definition', (ctx) => {
  test('a live score stores the current definition (feature_set): a newcomer has dispute_rate 0', async () => {
    const token = await ctx().token();
    const res = await score(ctx(), token, {
      entity_id: hash('feature-set-newcomer'),
      amount: 50,
      currency: 'USD',
      context: {},
    });
    assert.equal(res.statusCode, 200, res.body);
    const row = await ctx()
      .store.db.selectFrom('decisions')
      .select(['features', 'feature_set'])
      .where('id', '=', res.json().decision_id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(row.feature_set), FEATURE_SET);
    const stored = decodeFeatures(row.features!);
    assert.equal(stored.dispute_rate, 0);
    assert.equal(stored.cold_start, 1);
  });

  test('a backtest replays first-definition rows in the current definition, not as stored', async () => {
    // Clean newcomers decided under the first definition: dispute_rate held the prior's 0.1.
    const rows = Array.from({ length: 6 }, (_, i) => ({
      id: `old-def-${i}`,
      kind: 'score',
      environment: 'live',
      principal_id: 'p',
      owner_client_id: 'c',
      subject_id: hash(`old-def-e${i}`),
      request_digest: 'd',
      result: '{}',
      policy_version: '2026-11-23.1',
      created_at: Date.parse('2026-11-20T00:00:00Z') + i,
      features: JSON.stringify({ ...zeros(), dispute_rate: 0.1, cold_start: 1 }),
      risk_level: 'low',
      label: 'legit',
      label_source: 'api',
      labelled_at: Date.now(),
    }));
    await ctx()
      .store.db.insertInto('decisions')
      .values(rows as never)
      .execute();
    // Only dispute_rate weighs: 40 × 0.1 would put every row at critical (σ(−2 + 4) = 88).
    const policy: Policy = {
      ...DEFAULT_POLICY,
      version: 'dispute-only',
      bias: -2,
      weights: { ...Object.fromEntries(SIGNAL_NAMES.map((n) => [n, 0])), dispute_rate: 40 } as Policy['weights'],
    };
    const window = { since: Date.parse('2026-11-20T00:00:00Z'), until: Date.parse('2026-11-20T00:00:01Z') };
    const result = await backtestFromStore(ctx().store.db, 'live', policy, window, async () => undefined);
    assert.equal(result.decisions, 6);
    assert.deepEqual(result.levels.low, { low: 6, medium: 0, high: 0, critical: 0 });
  });
});
