// Per-address token limits count an IPv6 /64 as one source, so one subscriber cannot rotate
// through its own addresses to get a fresh budget for each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { limitSource } from '../../src/lib/source.ts';

test('IPv4 addresses are sources on their own; IPv4-mapped IPv6 is the IPv4 address', () => {
  assert.equal(limitSource('203.0.113.7'), '203.0.113.7');
  assert.equal(limitSource('::ffff:203.0.113.7'), '203.0.113.7');
});

test('every address of one IPv6 /64 is one source, whatever its spelling; another /64 is another', () => {
  const a = limitSource('2001:db8:1:2::1');
  assert.equal(a, '2001:db8:1:2::/64');
  for (const same of [
    '2001:db8:1:2:ffff:ffff:ffff:ffff',
    '2001:0db8:0001:0002:0:0:0:9',
    '2001:DB8:1:2::abcd',
    'fe80::1%eth0'.replace('fe80::1', '2001:db8:1:2::1'),
  ]) {
    assert.equal(limitSource(same), a, same);
  }
  assert.notEqual(limitSource('2001:db8:1:3::1'), a);
  assert.equal(limitSource('::1'), '0:0:0:0::/64');
});
