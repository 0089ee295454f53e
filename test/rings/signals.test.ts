// The ring signals and the plan's caps (docs/signals.md, "Rings"): pure. More flagged neighbours, or
// a fresher flag, never lower the score under any valid policy; the explanation still sums to the
// score; the plan never reads more than its caps, never expands a hub, and says when it stopped.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DEFAULT_POLICY, SIGNAL_NAMES } from '../../src/model/policy.ts';
import { evaluate } from '../../src/model/signal-model.ts';
import { plan, walkRing, collectSync, type RingRequest } from '../../src/rings/graph.ts';
import type { Ring, RingFlag } from '../../src/model/ring.ts';
import { MemoryGraph } from '../../src/rings/memory.ts';
import { HOUSEHOLD, ringFacts, ringSizeFromFirstDefinition, ringSizeValue } from '../../src/model/ring-signals.ts';
import { anyPolicy, DAY, NOW, profileArb, requestArb, veteranProfile } from '../helpers/profiles.ts';

const FLAGS: RingFlag[] = ['fraud_reported', 'blocklisted', 'chargeback', 'dispute_lost'];

const ringArb: fc.Arbitrary<Ring> = fc
  .array(
    fc.record({
      distance: fc.constantFrom(1, 2),
      flags: fc.subarray(FLAGS),
      age: fc.integer({ min: -DAY, max: 900 * DAY }),
      via: fc.array(fc.constantFrom('device', 'phone', 'bank_account', 'email', 'other'), {
        minLength: 1,
        maxLength: 2,
      }),
    }),
    { maxLength: 40 },
  )
  .map((nodes) => ({
    root: 'e1',
    edges: [],
    hubs: [],
    truncated: false,
    nodes: [
      { entityId: 'e1', distance: 0, flags: [], flaggedAt: 0, via: [] },
      ...nodes.map((n, i) => ({
        entityId: `n${i}`,
        distance: n.distance,
        flags: n.flags,
        flaggedAt: n.flags.length > 0 ? NOW - n.age : 0,
        via: n.via.slice(0, n.distance),
      })),
    ],
  }));

describe('ring signals', () => {
  test('flagging one more entity of the ring, or flagging one again later, never lowers the score; signals sum to it', () => {
    fc.assert(
      fc.property(
        profileArb,
        requestArb,
        anyPolicy,
        ringArb,
        fc.nat(),
        fc.constantFrom(...FLAGS),
        fc.nat({ max: 400 }),
        (profile, request, policy, ring, pick, flag, fresher) => {
          if (ring.nodes.length < 2) return;
          const target = 1 + (pick % (ring.nodes.length - 1));
          const before = evaluate({ ...profile, ring }, request, policy, NOW).result;
          const more = structuredClone(ring);
          const node = more.nodes[target]!;
          if (node.flags.length === 0) {
            node.flags = [flag];
            node.flaggedAt = NOW - fresher * DAY;
          } else {
            node.flaggedAt = Math.max(node.flaggedAt, NOW - fresher * DAY);
          }
          const after = evaluate({ ...profile, ring: more }, request, policy, NOW).result;
          assert.ok(after.score >= before.score, `${before.score} → ${after.score}`);
          for (const r of [before, after]) {
            const logit = policy.bias + r.signals.reduce((s, x) => s + x.weight * x.value, 0);
            assert.ok(Math.abs(r.score - 100 / (1 + Math.exp(-logit))) <= 0.5 + 1e-9);
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  test('ring_size and ring_flagged_entities are in SIGNAL_NAMES, capped, and 0 without a ring', () => {
    assert.ok(SIGNAL_NAMES.includes('ring_flagged_entities') && SIGNAL_NAMES.includes('ring_size'));
    fc.assert(
      fc.property(profileArb, requestArb, ringArb, (profile, request, ring) => {
        const { values } = evaluate({ ...profile, ring }, request, DEFAULT_POLICY, NOW);
        assert.ok(values.ring_flagged_entities >= 0 && values.ring_flagged_entities <= 4);
        assert.ok(values.ring_size >= 0 && values.ring_size <= 6);
        const none = evaluate({ ...profile, ring: null }, request, DEFAULT_POLICY, NOW).values;
        assert.equal(none.ring_flagged_entities + none.ring_size, 0);
      }),
      { numRuns: 200 },
    );
  });
});

describe('ring_size leaves out a household', () => {
  const sized = (n: number, truncated = false): Ring => ({
    root: 'e1',
    edges: [],
    hubs: [],
    truncated,
    nodes: [
      { entityId: 'e1', distance: 0, flags: [], flaggedAt: 0, via: [] },
      ...Array.from({ length: n }, (_, i) => ({
        entityId: `n${i}`,
        distance: 1 + (i % 2),
        flags: [],
        flaggedAt: 0,
        via: ['device'],
      })),
    ],
  });
  const size = (n: number) => ringSizeValue(ringFacts(sized(n), NOW, 180));
  const REQUEST = { entity_id: 'e1', amount: 100, currency: 'USD', context: {} };

  test('0 for up to HOUSEHOLD accounts within two hops, then log2(1 + n − HOUSEHOLD), non-decreasing, capped at 6', () => {
    assert.equal(HOUSEHOLD, 2);
    for (let n = 0; n <= HOUSEHOLD; n++) assert.equal(size(n), 0, `${n} accounts`);
    assert.equal(size(3), 1);
    assert.equal(size(5), 2);
    for (let n = 1; n < 80; n++) assert.ok(size(n) >= size(n - 1), `${n}`);
    assert.equal(size(65), 6);
    assert.equal(size(500), 6);
  });

  test('a household sharing a device adds nothing to the score; a ring of five does', () => {
    const household = evaluate({ ...veteranProfile(), ring: sized(2) }, REQUEST, DEFAULT_POLICY, NOW);
    const alone = evaluate({ ...veteranProfile(), ring: null }, REQUEST, DEFAULT_POLICY, NOW);
    assert.equal(household.values.ring_size, 0);
    assert.ok(!household.result.signals.some((x) => x.name === 'ring_size'));
    assert.equal(household.result.score, alone.result.score);
    const wider = evaluate({ ...veteranProfile(), ring: sized(5) }, REQUEST, DEFAULT_POLICY, NOW);
    assert.equal(wider.values.ring_size, 2);
  });

  test('a first-definition value (log2(1 + n), feature_set ≤ 2) converts to the current one', () => {
    for (let n = 0; n <= 62; n++) {
      const stored = Math.round(Math.log2(1 + n) * 1e4) / 1e4;
      assert.equal(ringSizeFromFirstDefinition(stored), Math.log2(1 + Math.max(0, n - HOUSEHOLD)), `n = ${n}`);
    }
    assert.equal(ringSizeFromFirstDefinition(6), Math.log2(62), 'at the old cap, 63 accounts');
    assert.equal(ringSizeFromFirstDefinition(0), 0);
    assert.equal(ringSizeFromFirstDefinition(Number.NaN), 0);
  });
});

describe('the ring plan', () => {
  const entity = (id: string) => ({
    entityId: id,
    fraudReports: 0,
    blocklisted: false,
    chargebacks: 0,
    disputesLost: 0,
    flaggedAt: 0,
  });

  test('never reads more than its caps per hop, never expands a hub, and reports truncation', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 2, max: 30 }),
        (ids, holders, cap, fanout) => {
          const g = new MemoryGraph(entity);
          for (let i = 0; i < ids; i++) {
            g.link('root', 'device', `d${i}`);
            for (let j = 0; j < holders; j++) {
              g.link(`e${i}-${j}`, 'device', `d${i}`);
              g.link(`e${i}-${j}`, 'phone', `p${i}-${j}`);
              g.link(`f${i}-${j}`, 'phone', `p${i}-${j}`);
            }
          }
          const caps = { depth: 2, fanout, identifiersPerHop: cap, entitiesPerHop: 2 * cap };
          const requests: RingRequest[] = [];
          const gen = plan('root', [], caps);
          const answer = (r: RingRequest) => {
            requests.push(r);
            return g.answer(r);
          };
          const hood = collectSync(gen, answer);
          for (const r of requests) {
            if (r.kind === 'identifiers') assert.ok(r.limit <= cap + 1);
            if (r.kind === 'holders') {
              assert.ok(r.limit <= 2 * cap + 1 && r.identifiers.length <= cap);
              // A hub (more holders than the fanout) is never asked for.
              for (const k of r.identifiers)
                assert.ok(k.idType === 'phone' || holders + 1 <= fanout, `${k.hash} expanded`);
            }
          }
          assert.ok(hood.entities.size <= 4 * cap);
          const reachable = holders + 1 <= fanout ? ids * holders * 2 : 0;
          if (reachable > 0 && (ids > cap || ids * holders > 2 * cap)) assert.equal(hood.truncated, true);
          const ring = walkRing(hood, 2, fanout, 50);
          assert.ok(ring.nodes.length <= 50);
          if (holders + 1 > fanout)
            assert.deepEqual(
              ring.nodes.map((n) => n.entityId),
              ['root'],
            );
        },
      ),
      { numRuns: 150 },
    );
  });
});
