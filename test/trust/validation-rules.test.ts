// The checks beyond the schema as plain functions (issue 8): optional trade amounts, raw
// identifiers winning over other errors, the 2009 date floor, bounded context depth, country
// codes, hashed-id mode, and the wording of the detail sentence.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { DomainError, summarise } from '../../src/lib/domain-errors.ts';
import { isCountryCode } from '../../src/model/currency.ts';
import { checkEvents, checkScoreBody, dateErrors, eventErrors, type TrustEvent } from '../../src/trust/schemas.ts';
import { contextBoundErrors, contextRawIdentifierErrors } from '../../src/trust/context-checks.ts';

const hash = (s: string) => createHash('sha256').update(s).digest('hex');
const ev = (over: Partial<TrustEvent> = {}): TrustEvent => ({
  event_id: 'e1',
  type: 'trade.completed',
  entity_id: hash('a'),
  occurred_at: new Date().toISOString(),
  ...over,
});
const thrown = (fn: () => void): DomainError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error('did not throw');
};

test('trade.completed needs neither amount nor currency, but the two go together', () => {
  assert.deepEqual(eventErrors(ev(), 'events.0', []), { validation: [], raw: [] });
  assert.deepEqual(
    eventErrors(ev({ amount: 5 }), 'events.0', []).validation.map((e) => e.field),
    ['events.0.currency'],
  );
  assert.deepEqual(
    eventErrors(ev({ currency: 'USD' }), 'events.0', []).validation.map((e) => e.field),
    ['events.0.amount'],
  );
});

test('a raw identifier anywhere in a batch wins over every other error', () => {
  const err = thrown(() =>
    checkEvents(
      [ev({ currency: 'usd', amount: 1 }), ev({ entity_id: 'tel:+14155552671', occurred_at: '0001-01-01T00:00:00Z' })],
      [],
    ),
  );
  assert.equal(err.code, 'raw_identifier_rejected');
  assert.deepEqual(err.options.errors, [
    { field: 'events.1.entity_id', message: 'looks like a raw phone number; send a hash of it instead' },
  ]);
  const score = thrown(() =>
    checkScoreBody(
      {
        entity_id: hash('x'),
        amount: 1,
        currency: 'ZZZ',
        context: { counterparty_id: 'John <a@b.com>', country: 'ZZ' },
      },
      [],
    ),
  );
  assert.equal(score.code, 'raw_identifier_rejected');
  assert.ok(!JSON.stringify(score.options).includes('a@b.com'));
});

test('dates: unreadable, before 2009-01-01, or fine', () => {
  assert.equal(dateErrors('f', '2016-12-31T23:59:60Z')[0]?.message.includes('RFC 3339'), true);
  assert.deepEqual(dateErrors('f', '0001-01-01T00:00:00Z'), [
    { field: 'f', message: 'must not be before 2009-01-01T00:00:00Z' },
  ]);
  assert.deepEqual(dateErrors('f', '2008-12-31T23:59:59.999Z').length, 1);
  assert.deepEqual(dateErrors('f', '2009-01-01T00:00:00Z'), []);
  assert.deepEqual(dateErrors('f', undefined), []);
});

test('the context check stays shallow (never recurses past the limit) on 100 000 levels of nesting', () => {
  const n = 100_000;
  const deep = JSON.parse(`${'['.repeat(n)}${']'.repeat(n)}`) as unknown;
  assert.match(contextBoundErrors('context', deep)[0]!.message, /deeper than 5/);
  const objects = JSON.parse(`{"a":${'{"a":'.repeat(n)}1${'}'.repeat(n)}}`) as unknown;
  assert.match(contextBoundErrors('context', objects)[0]!.message, /deeper than 5/);
  // as before: the leaf counts as a level
  assert.deepEqual(contextBoundErrors('context', { a: { b: { c: { d: 1 } } } }), []);
  assert.equal(contextBoundErrors('context', { a: { b: { c: { d: { e: 1 } } } } }).length, 1);
});

test('the context is bounded in string length, list and map size, and serialised size, each named', () => {
  assert.deepEqual(contextBoundErrors('context', { note: 'x'.repeat(1_024), items: Array(100).fill(1) }), []);
  assert.deepEqual(contextBoundErrors('context', { a: { note: 'x'.repeat(1_025) } }), [
    { field: 'context.a.note', message: 'is 1025 characters long; at most 1024' },
  ]);
  assert.equal(contextBoundErrors('context', { items: Array(101).fill(1) })[0]!.field, 'context.items');
  const wide = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, 1]));
  assert.match(contextBoundErrors('context', wide)[0]!.message, /101 members/);
  const big = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'x'.repeat(1_000)]));
  assert.match(contextBoundErrors('context', big)[0]!.message, /characters as JSON; at most 16384/);
});

test('raw identifiers in context members Vouch does not define are refused, at their path', () => {
  const errors = contextRawIdentifierErrors('context', {
    payment_method: 'card',
    reference: '+44 7700 900123',
    buyer: { email: 'someone@example.com' },
    note: 'paid on 2026-11-20, 1,250.00 USD',
  });
  assert.deepEqual(
    errors.map((e) => e.field),
    ['context.reference', 'context.buyer.email'],
  );
});

test('country codes: assigned ISO 3166-1 alpha-2 (and XK)', () => {
  for (const c of ['DE', 'GB', 'US', 'NG', 'XK']) assert.equal(isCountryCode(c), true, c);
  for (const c of ['ZZ', 'AA', 'UK', 'EU', 'de', 'DEU', '']) assert.equal(isCountryCode(c), false, c);
});

test('hashed-id mode: entity, counterparty and linked hashes must be digests of >= 32 characters', () => {
  const err = thrown(() =>
    checkScoreBody(
      {
        entity_id: 'user_1',
        amount: 1,
        currency: 'USD',
        context: { counterparty_id: hash('c'), linked_identifiers: [{ type: 'device', hash: 'device-12' }] },
      },
      [],
      { requireHashedIds: true },
    ),
  );
  assert.equal(err.code, 'validation_failed');
  assert.deepEqual(
    err.options.errors?.map((e) => e.field),
    ['entity_id', 'context.linked_identifiers.0.hash'],
  );
  assert.doesNotThrow(() => checkScoreBody({ entity_id: 'user_1', amount: 1, currency: 'USD' }, []));
  assert.deepEqual(
    eventErrors(ev({ entity_id: 'short' }), 'e', [], Date.now(), { requireHashedIds: true }).validation.map(
      (e) => e.field,
    ),
    ['e.entity_id'],
  );
});

test('summarise names every missing field and counts the other problems beyond three', () => {
  const missing = Array.from({ length: 6 }, (_, i) => ({ field: `f${i}`, message: 'is required' }));
  assert.equal(summarise(missing), '6 missing fields: f0, f1, f2, f3, f4, f5');
  assert.equal(summarise([missing[0]!]), 'missing field f0');
  const other = Array.from({ length: 5 }, (_, i) => ({ field: `g${i}`, message: 'is bad' }));
  assert.equal(
    summarise([...other, missing[1]!]),
    'missing field f1; g0 is bad; g1 is bad; g2 is bad; and 2 more (see errors)',
  );
  const many = Array.from({ length: 25 }, (_, i) => ({ field: `m${i}`, message: 'is required' }));
  assert.match(summarise(many), /^25 missing fields: m0, .*m19 and 5 more$/);
});
