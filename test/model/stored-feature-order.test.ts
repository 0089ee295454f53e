// The stored feature vector (docs/api.md, "Outcomes and labels"; issue 42): the order of its
// values is frozen. A stored array's i-th value is the i-th name below for as long as the row is
// kept, so this list only grows at its end: a new signal is APPENDED (here and to
// STORED_FEATURE_ORDER), never inserted, and no name is ever removed or moved. SIGNAL_NAMES may
// be reordered freely; this list may not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SIGNAL_NAMES, type SignalName } from '../../src/model/policy.ts';
import {
  decodeFeatures,
  decodeFeaturesOrNull,
  encodeFeatures,
  learningColumns,
  STORED_FEATURE_ORDER,
} from '../../src/model/feature-vector.ts';

const PINNED = [
  'completed_trades',
  'dispute_rate',
  'cancellation_rate',
  'chargebacks',
  'fraud_reports',
  'blocklisted',
  'new_account',
  'cold_start',
  'velocity_trades',
  'velocity_volume',
  'amount_vs_history',
  'new_counterparty',
  'payment_method_risk',
  'cross_border',
  'linked_flagged_entities',
  'cash_out_burst',
  'dormant_reactivation',
  'young_account_reversible_method',
  'shared_identifier_entities',
  'new_counterparty_large_trade',
  'network_flags',
  'ring_flagged_entities',
  'ring_size',
  'reversible_new_counterparty',
  'cross_border_new_counterparty',
  'fraudulent_dispute_losses',
];

test('the stored order is frozen: the pinned names first, in order; new signals only append', () => {
  assert.deepEqual(
    STORED_FEATURE_ORDER.slice(0, PINNED.length),
    PINNED,
    'a stored name moved or was removed: append new signals at the end instead',
  );
});

test('the stored order names every signal exactly once', () => {
  assert.equal(new Set(STORED_FEATURE_ORDER).size, STORED_FEATURE_ORDER.length, 'no name twice');
  assert.deepEqual([...STORED_FEATURE_ORDER].sort(), [...SIGNAL_NAMES].sort(), 'a new signal is appended here too');
});

const recordOf = (values: number[]) =>
  Object.fromEntries(STORED_FEATURE_ORDER.map((n, i) => [n, values[i]!])) as Record<SignalName, number>;
const doubles = fc.oneof(
  fc.constant(0),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer().map((i) => i / 10_000),
);

test('values round-trip exactly (every double), as the object of names in the stored order', () => {
  fc.assert(
    fc.property(
      fc.array(doubles, { minLength: STORED_FEATURE_ORDER.length, maxLength: STORED_FEATURE_ORDER.length }),
      (v) => {
        const values = recordOf(v);
        const text = encodeFeatures(values);
        assert.ok(text.startsWith('['));
        const decoded = decodeFeatures(text);
        // what the object form wrote is what the array reads back as, byte for byte (JSON writes -0 as 0 in both)
        assert.equal(JSON.stringify(decoded), JSON.stringify(values));
        for (const n of STORED_FEATURE_ORDER) assert.ok(Object.is(decoded[n], values[n] === 0 ? 0 : values[n]), n);
      },
    ),
  );
});

test('trailing zeros are left out and read back as 0; a shorter array reads 0 past its end', () => {
  const values = recordOf(STORED_FEATURE_ORDER.map(() => 0));
  values.velocity_trades = 0.5;
  assert.equal(encodeFeatures(values), '[0,0,0,0,0,0,0,0,0.5]');
  assert.equal(encodeFeatures(recordOf(STORED_FEATURE_ORDER.map(() => 0))), '[]');
  const decoded = decodeFeatures('[1,2]');
  assert.deepEqual(Object.keys(decoded), [...STORED_FEATURE_ORDER]);
  assert.equal(decoded.completed_trades, 1);
  assert.equal(decoded.dispute_rate, 2);
  assert.equal(decoded.fraudulent_dispute_losses, 0);
});

test('the object form rows kept before is read as it was stored; damaged text is null for the lenient reader', () => {
  const old = { velocity_trades: 0.25, completed_trades: 3 };
  assert.deepEqual(decodeFeatures(JSON.stringify(old)), old);
  assert.equal(decodeFeaturesOrNull(null), null);
  assert.equal(decodeFeaturesOrNull('{not json'), null);
  assert.equal(decodeFeaturesOrNull('7'), null);
  assert.throws(() => decodeFeatures('{not json'), SyntaxError);
});

test('learningColumns stores the array, about a tenth of the object of names', () => {
  const values = recordOf(STORED_FEATURE_ORDER.map((_, i) => (i % 3 === 0 ? 0 : i / 7)));
  const request = { entity_id: 'e', amount: 10, currency: 'USD', context: {} };
  const result = { riskLevel: 'low' } as Parameters<typeof learningColumns>[2];
  const { features } = learningColumns(values, request, result, null);
  assert.equal(features, encodeFeatures(values));
  assert.ok(features.length < JSON.stringify(values).length / 2, `${features.length} bytes`);
});
