// A stored JSON text read as an object (src/lib/json-object.ts): damaged or older rows read as null.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseJsonObject } from '../../src/lib/json-object.ts';

test('an object is read as itself', () => {
  assert.deepEqual(parseJsonObject('{"amount":12.5,"context":{"side":"buy"}}'), {
    amount: 12.5,
    context: { side: 'buy' },
  });
});

test('null, empty, truncated or non-JSON text reads as null, never a throw', () => {
  for (const text of [null, undefined, '', '{"amount":', 'not json', '{"a":1}}'])
    assert.equal(parseJsonObject(text), null, JSON.stringify(text));
});

test('JSON that is not an object (an array, a number, a string, null) reads as null', () => {
  for (const text of ['[1,2]', '5', '"x"', 'null', 'true']) assert.equal(parseJsonObject(text), null, text);
});
