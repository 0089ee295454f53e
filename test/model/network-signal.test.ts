// The network_flags rule (docs/network.md, "The signal"): a peer's contribution is its weight times
// an age decay, capped at half the signal; the value is their sum capped at 1, so one peer moves it
// by half at most and two independent peers agreeing reach the full value.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  HALF_LIFE_DAYS,
  NETWORK_CAP,
  PEER_CAP,
  networkFlagsSignal,
  type PeerFlag,
} from '../../src/model/network-signal.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import { scoreEntity } from '../../src/model/signal-model.ts';
import type { EntityProfile } from '../../src/model/types.ts';
import { NOW as PROFILE_NOW, freshProfile, veteranProfile } from '../helpers/profiles.ts';

const NOW = Date.UTC(2026, 10, 20);
const flag = (id: string, weight = 1, month = '2026-11', kinds: PeerFlag['kinds'] = { fraud_report: 1 }): PeerFlag => ({
  peer_id: id,
  peer_name: id.toUpperCase(),
  weight,
  kinds,
  latest_month: month,
});

test('one peer counts half; two agreeing peers reach the full value; a third adds nothing; none counts nothing', () => {
  assert.equal(networkFlagsSignal([], NOW).value, 0);
  assert.equal(networkFlagsSignal([flag('a')], NOW).value, 0.5);
  assert.equal(networkFlagsSignal([flag('a'), flag('b')], NOW).value, 1);
  assert.equal(networkFlagsSignal([flag('a'), flag('b'), flag('c')], NOW).value, 1);
});

test("the decision's contributions add up to the value, shrunk alike beyond the cap", () => {
  assert.deepEqual(
    networkFlagsSignal([flag('a'), flag('b')], NOW).peers.map((p) => p.contribution),
    [0.5, 0.5],
  );
  const three = networkFlagsSignal([flag('a'), flag('b'), flag('c', 0.5)], NOW);
  assert.deepEqual(
    three.peers.map((p) => p.contribution),
    [0.4, 0.4, 0.2],
  );
});

test("a peer's weight scales it, but no peer contributes more than the cap; weight 0 contributes nothing", () => {
  assert.equal(networkFlagsSignal([flag('a', 0.5)], NOW).value, 0.25);
  assert.equal(networkFlagsSignal([flag('a', 10)], NOW).value, PEER_CAP);
  const zero = networkFlagsSignal([flag('a', 0), flag('b')], NOW);
  assert.deepEqual(
    zero.peers.map((p) => p.id),
    ['b'],
  );
  assert.equal(zero.value, 0.5);
});

test('older flags count less: the contribution halves every half-life', () => {
  const recent = networkFlagsSignal([flag('a', 1, '2026-10')], NOW).value;
  const old = networkFlagsSignal([flag('a', 1, '2026-07')], NOW).value;
  assert.ok(old < recent && old > 0);
  const days = (Date.UTC(2026, 10, 1) - Date.UTC(2026, 7, 1)) / 86_400_000;
  assert.ok(Math.abs(old / recent - 2 ** (-days / HALF_LIFE_DAYS)) < 0.01);
});

test('the description names how many marketplaces and which kinds', () => {
  const s = networkFlagsSignal(
    [flag('a', 1, '2026-11', { chargeback: 2 }), flag('b', 1, '2026-10', { fraud_report: 1 })],
    NOW,
  );
  assert.equal(
    s.description,
    'an identifier it uses was flagged by 2 other marketplaces in the last 90 days (chargeback, fraud report)',
  );
  assert.match(
    networkFlagsSignal([flag('a', 1, '2025-01')], NOW).description,
    /flagged by 1 other marketplace \(latest 2025-01\)/,
  );
});

test('properties: a peer more never lowers the value nor raises it by more than the cap, whatever its weight; the value never exceeds the full one', () => {
  const peer = fc.record({
    weight: fc.double({ min: 0, max: 10, noNaN: true }),
    month: fc.constantFrom('2025-06', '2026-01', '2026-09', '2026-11'),
  });
  fc.assert(
    fc.property(fc.array(peer, { minLength: 1, maxLength: 6 }), peer, (peers, extra) => {
      const flags = peers.map((p, i) => flag(`p${i}`, p.weight, p.month));
      const before = networkFlagsSignal(flags, NOW).value;
      const after = networkFlagsSignal([...flags, flag('extra', extra.weight, extra.month)], NOW).value;
      assert.ok(after >= before - 0.001);
      assert.ok(after - before <= PEER_CAP + 0.001);
      assert.ok(after <= NETWORK_CAP && networkFlagsSignal([flags[0]!], NOW).value <= PEER_CAP);
    }),
  );
});

test('calibration under the default policy (docs/signals.md): a lone peer moves a score a little, two agreeing more, a third nothing', () => {
  const month = new Date(PROFILE_NOW).toISOString().slice(0, 7);
  const scoreWith = (profile: EntityProfile, peers: number) => {
    profile.networkFlags = Array.from({ length: peers }, (_, i) => flag(`p${i}`, 1, month));
    return scoreEntity(
      profile,
      { entity_id: 'e', amount: 100, currency: 'USD', context: {} },
      DEFAULT_POLICY,
      PROFILE_NOW,
    ).score;
  };
  assert.deepEqual(
    [0, 1, 2, 3].map((n) => scoreWith(freshProfile(), n)),
    [13, 28, 60, 60],
  );
  assert.deepEqual(
    [0, 1, 2, 3].map((n) => scoreWith(veteranProfile(), n)),
    [2, 6, 13, 13],
  );
});
