import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_DISPUTE_POLICY } from '../../src/model/dispute-policy.ts';
import { DEFAULT_POLICY, SIGNAL_DIRECTIONS, SIGNAL_NAMES } from '../../src/model/policy.ts';
import { loadPolicy, validatePolicy } from '../../src/model/policy-document.ts';

const dir = mkdtempSync(join(tmpdir(), 'vouch-policy-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let fileNo = 0;
function write(content: unknown): string {
  const path = join(dir, `policy-${fileNo++}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

/** A deep copy of the default policy with `edit` applied; edits deliberately break its type. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Doc = Record<string, any>;
function variant(edit: (p: Doc) => void): Doc {
  const p = structuredClone(DEFAULT_POLICY) as Doc;
  edit(p);
  return p;
}

function rejects(content: unknown, ...mustMention: string[]): string {
  const path = write(content);
  let message = '';
  assert.throws(
    () => loadPolicy(path),
    (err: unknown) => {
      assert.ok(err instanceof Error);
      message = err.message;
      return true;
    },
  );
  assert.ok(!message.includes('\n'), `message is not one line: ${message}`);
  for (const m of mustMention) assert.ok(message.includes(m), `"${message}" does not mention ${m}`);
  return message;
}

describe('policy', () => {
  test('the built-in policy is valid and has the documented defaults', () => {
    const p = loadPolicy();
    assert.deepEqual(p, DEFAULT_POLICY);
    assert.deepEqual(p.thresholds, { medium: 30, high: 60, critical: 85 });
    assert.equal(p.cacheTtlSeconds, 30);
    assert.deepEqual(p.disputePrior, { alpha: 1, beta: 9 });
    assert.deepEqual(p.cryptoAssets, ['BTC', 'ETH', 'USDT', 'USDC', 'BNB', 'SOL', 'TRX', 'XRP', 'LTC', 'DAI']);
    assert.deepEqual(p.dispute, DEFAULT_DISPUTE_POLICY);
    assert.deepEqual(Object.keys(p.weights).sort(), [...SIGNAL_NAMES].sort());
    assert.ok(Object.isFrozen(DEFAULT_POLICY) && Object.isFrozen(DEFAULT_POLICY.weights));
  });

  test('every default weight has its signal’s sign', () => {
    for (const n of SIGNAL_NAMES) {
      const w = DEFAULT_POLICY.weights[n];
      assert.ok(SIGNAL_DIRECTIONS[n] === 'risk' ? w >= 0 : w <= 0, n);
    }
  });

  test('a file holding a valid policy loads', () => {
    const doc = variant((p) => {
      p.version = 'custom-1';
      p.weights.blocklisted = 9;
      p.weights.cross_border = 0;
    });
    const p = loadPolicy(write(doc));
    assert.equal(p.version, 'custom-1');
    assert.equal(p.weights.blocklisted, 9);
  });

  test('a risk weight below zero is rejected, naming the weight', () => {
    rejects(
      variant((p) => (p.weights.chargebacks = -1)),
      '/weights/chargebacks',
      '>= 0',
    );
  });

  test('a protective weight above zero is rejected, naming the weight', () => {
    rejects(
      variant((p) => (p.weights.completed_trades = 0.5)),
      '/weights/completed_trades',
      '<= 0',
    );
  });

  test('thresholds must be strictly increasing within 1..99', () => {
    rejects(
      variant((p) => (p.thresholds = { medium: 60, high: 60, critical: 85 })),
      '/thresholds/high',
    );
    rejects(
      variant((p) => (p.thresholds = { medium: 30, high: 90, critical: 85 })),
      '/thresholds/critical',
    );
    rejects(
      variant((p) => (p.thresholds.medium = 0)),
      '/thresholds/medium',
    );
    rejects(
      variant((p) => (p.thresholds.critical = 100)),
      '/thresholds/critical',
    );
    rejects(
      variant((p) => (p.thresholds.high = 60.5)),
      '/thresholds/high',
    );
  });

  test('unknown fields are rejected, top-level and nested', () => {
    rejects(
      variant((p) => (p.extra = true)),
      '/extra',
      'unknown field',
    );
    rejects(
      variant((p) => (p.weights.typo_signal = 1)),
      '/weights/typo_signal',
      'unknown field',
    );
    rejects(
      variant((p) => (p.dispute.surprise = 1)),
      '/dispute/surprise',
      'unknown field',
    );
  });

  test('missing and mistyped fields are rejected', () => {
    rejects(
      variant((p) => delete p.weights.blocklisted),
      '/weights/blocklisted',
      'missing',
    );
    rejects(
      variant((p) => delete p.version),
      '/version',
      'missing',
    );
    rejects(
      variant((p) => (p.paymentMethodRisk.card = 1.5)),
      '/paymentMethodRisk/card',
    );
    rejects(
      variant((p) => (p.decayHalfLifeDays = 0)),
      '/decayHalfLifeDays',
    );
    rejects(
      variant((p) => (p.disputePrior.alpha = 'one')),
      '/disputePrior/alpha',
    );
    rejects(
      variant((p) => (p.cryptoAssets = ['BTC', 'btc'])),
      '/cryptoAssets/1',
    );
    rejects(
      variant((p) => (p.cryptoAssets = ['BTC', 'BTC'])),
      '/cryptoAssets/1',
      'duplicate',
    );
    rejects(
      variant((p) => (p.dispute.confidenceFloor = 2)),
      '/dispute/confidenceFloor',
    );
    rejects([1, 2, 3], 'must be object');
  });

  test('bad JSON is rejected with a one-line message', () => {
    rejects('{"version": "x",\n  "bias": }', 'not valid JSON');
  });

  test('an unreadable file is rejected, naming the path', () => {
    const missing = join(dir, 'nope.json');
    assert.throws(
      () => loadPolicy(missing),
      (err: Error) => err.message.includes(missing) && !err.message.includes('\n'),
    );
  });

  test('validatePolicy accepts in-memory documents and never mutates them', () => {
    const doc = structuredClone(DEFAULT_POLICY);
    assert.deepEqual(validatePolicy(doc), DEFAULT_POLICY);
    assert.throws(() => validatePolicy({ ...doc, bias: Number.NaN }), /\/bias/);
  });
});
