// The ring graph kept at ingest matches a from-scratch recomputation (docs/api.md, "Rings"): after
// any sequence of link, flag, unblocklist and erasure events, every entity's graph (depth 3) has
// the distances, flags, edges and hubs a breadth-first walk over the surviving links gives, hubs
// (more holders than maxIdentifierFanout, 3 here) are never traversed, and identifier_stats holds
// each identifier's holders and its fraud-reported or blocklisted ones. Both stores.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { bearer, describeEachBackend, type TestContext } from '../helpers/app.ts';
import { event, hash } from '../helpers/trust.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';

const FANOUT = 3;
const ENTITIES = 6;
const TYPES = ['device', 'bank_account', 'phone', 'email'] as const;
const IDENTIFIERS = 5;

type Op =
  | { kind: 'link'; e: number; i: number }
  | { kind: 'flag'; e: number; type: 'fraud.reported' | 'entity.blocklisted' | 'chargeback' | 'dispute.resolved' }
  | { kind: 'unblock'; e: number }
  | { kind: 'erase'; e: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant('link' as const), e: fc.nat(ENTITIES - 1), i: fc.nat(IDENTIFIERS - 1) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('flag' as const),
      e: fc.nat(ENTITIES - 1),
      type: fc.constantFrom(
        'fraud.reported' as const,
        'entity.blocklisted' as const,
        'chargeback' as const,
        'dispute.resolved' as const,
      ),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('unblock' as const), e: fc.nat(ENTITIES - 1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('erase' as const), e: fc.nat(ENTITIES - 1) }) },
);

interface ModelEntity {
  links: Set<number>;
  flags: Set<string>;
}

/** The graph from scratch: the surviving links and flags after `ops`. */
function replay(ops: Op[]): Map<number, ModelEntity> {
  const entities = new Map<number, ModelEntity>();
  const get = (e: number) => entities.get(e) ?? entities.set(e, { links: new Set(), flags: new Set() }).get(e)!;
  for (const op of ops) {
    if (op.kind === 'erase') entities.delete(op.e);
    else if (op.kind === 'link') get(op.e).links.add(op.i);
    else if (op.kind === 'unblock') get(op.e).flags.delete('blocklisted');
    else
      get(op.e).flags.add(
        {
          'fraud.reported': 'fraud_reported',
          'entity.blocklisted': 'blocklisted',
          chargeback: 'chargeback',
          'dispute.resolved': 'dispute_lost',
        }[op.type],
      );
  }
  return entities;
}

const FLAG_ORDER = ['fraud_reported', 'blocklisted', 'chargeback', 'dispute_lost'];

/** Breadth-first over non-hub identifiers, as docs/api.md describes the graph. */
function expectedGraph(
  model: Map<number, ModelEntity>,
  root: number,
  depth: number,
  name: (e: number) => string,
  idHash: (i: number) => string,
) {
  const holders = (i: number) => [...model.entries()].filter(([, m]) => m.links.has(i)).map(([e]) => e);
  const distance = new Map<number, number>([[root, 0]]);
  const expanded = new Set<number>();
  let frontier = [root];
  for (let d = 1; d <= depth; d++) {
    const next: number[] = [];
    for (const e of frontier) {
      for (const i of model.get(e)!.links) {
        const hs = holders(i);
        if (hs.length > FANOUT) continue;
        expanded.add(i);
        for (const h of hs)
          if (!distance.has(h)) {
            distance.set(h, d);
            next.push(h);
          }
      }
    }
    frontier = next;
  }
  const hubs = new Set<number>();
  for (const [e, d] of distance)
    if (d < depth) for (const i of model.get(e)!.links) if (holders(i).length > FANOUT) hubs.add(i);
  return {
    nodes: [...distance.entries()]
      .map(([e, d]) => ({
        entity_id: name(e),
        distance: d,
        flags: FLAG_ORDER.filter((f) => model.get(e)!.flags.has(f)),
      }))
      .sort((x, y) => x.distance - y.distance || (x.entity_id < y.entity_id ? -1 : 1)),
    groups: [...expanded]
      .filter((i) => holders(i).length > 1)
      .map((i) => `${TYPES[i % TYPES.length]}:${idHash(i)}=${holders(i).map(name).sort().join(',')}`)
      .sort(),
    hubs: [...hubs].map((i) => `${idHash(i)}:${holders(i).length}`).sort(),
  };
}

describeEachBackend('rings: the graph matches a from-scratch recomputation', (ctx) => {
  let admin = '';
  before(async () => {
    admin = await ctx().token();
    const policy = {
      ...JSON.parse(JSON.stringify(DEFAULT_POLICY)),
      version: 'ring-fanout-3',
      maxIdentifierFanout: FANOUT,
    };
    assert.equal(
      (await ctx().inject({ method: 'POST', url: '/api/v1/policies', headers: bearer(admin), payload: policy }))
        .statusCode,
      201,
    );
    const act = await ctx().inject({
      method: 'POST',
      url: '/api/v1/policies/ring-fanout-3/activate',
      headers: bearer(admin),
      payload: {},
    });
    assert.equal(act.statusCode, 200, act.body);
  });

  const send = async (c: TestContext, events: Record<string, unknown>[]) => {
    const res = await c.inject({
      method: 'POST',
      url: '/api/v1/trust/events',
      headers: bearer(admin),
      payload: { events },
    });
    assert.equal(res.statusCode, 200, res.body);
  };

  test('after any sequence of link, flag, unblocklist and erasure events', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 14 }), async (ops) => {
        run += 1;
        const name = (e: number) => hash(`prop-${process.pid}-${run}-e${e}`);
        const idHash = (i: number) => hash(`prop-${process.pid}-${run}-i${i}`);
        const c = ctx();
        for (const [k, op] of ops.entries()) {
          // Strictly increasing times, so a later unblocklist always wins over an earlier blocklisting.
          const age = (ops.length - k) * 60_000;
          if (op.kind === 'erase') {
            const res = await c.inject({
              method: 'DELETE',
              url: `/api/v1/trust/entities/${name(op.e)}`,
              headers: bearer(admin),
            });
            assert.ok(res.statusCode === 200 || res.statusCode === 404, res.body);
          } else if (op.kind === 'link') {
            await send(c, [
              event(
                'identifier.linked',
                name(op.e),
                { linked_identifiers: [{ type: TYPES[op.i % TYPES.length], hash: idHash(op.i) }] },
                age,
              ),
            ]);
          } else if (op.kind === 'unblock') {
            await send(c, [event('entity.unblocklisted', name(op.e), {}, age)]);
          } else {
            await send(c, [
              event(op.type, name(op.e), op.type === 'dispute.resolved' ? { resolution: 'against' } : {}, age),
            ]);
          }
        }
        const model = replay(ops);
        for (const root of model.keys()) {
          const res = await c.inject({
            method: 'GET',
            url: `/api/v1/trust/entities/${name(root)}/graph?depth=3`,
            headers: bearer(admin),
          });
          assert.equal(res.statusCode, 200, res.body);
          const body = res.json() as {
            nodes: Array<{ entity_id: string; distance: number; flagged: boolean; flags: string[] }>;
            edges: Array<{ from: string; to: string; type: string; hash: string }>;
            hubs: Array<{ hash: string; entities: number }>;
            truncated: boolean;
          };
          const want = expectedGraph(model, root, 3, name, idHash);
          assert.deepEqual(
            body.nodes.map(({ entity_id, distance, flags }) => ({ entity_id, distance, flags })),
            want.nodes,
          );
          assert.ok(body.nodes.every((n) => n.flagged === n.flags.length > 0));
          const groups = new Map<string, Set<string>>();
          for (const e of body.edges) {
            const key = `${e.type}:${e.hash}`;
            groups.set(key, new Set([...(groups.get(key) ?? []), e.from, e.to]));
          }
          assert.deepEqual([...groups].map(([k, v]) => `${k}=${[...v].sort().join(',')}`).sort(), want.groups);
          assert.deepEqual(body.hubs.map((h) => `${h.hash}:${h.entities}`).sort(), want.hubs);
          assert.equal(body.truncated, false);
        }
        for (let e = 0; e < ENTITIES; e++) {
          if (!model.has(e))
            assert.equal(
              (
                await c.inject({
                  method: 'GET',
                  url: `/api/v1/trust/entities/${name(e)}/graph`,
                  headers: bearer(admin),
                })
              ).statusCode,
              404,
            );
        }
        // identifier_stats: holders, and of those the fraud-reported or blocklisted ones (linked_flagged_entities'
        // meaning).
        for (let i = 0; i < IDENTIFIERS; i++) {
          const row = await c.store.db
            .selectFrom('identifier_stats')
            .select(['entities', 'flagged_entities'])
            .where('environment', '=', 'live')
            .where('id_type', '=', TYPES[i % TYPES.length]!)
            .where('hash', '=', idHash(i))
            .executeTakeFirst();
          const hs = [...model.values()].filter((m) => m.links.has(i));
          const flagged = hs.filter((m) => m.flags.has('fraud_reported') || m.flags.has('blocklisted')).length;
          assert.deepEqual(
            [Number(row?.entities ?? 0), Number(row?.flagged_entities ?? 0)],
            [hs.length, flagged],
            `identifier ${i}`,
          );
        }
      }),
      { numRuns: 25 },
    );
  });
});
