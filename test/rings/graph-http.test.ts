// GET /api/v1/trust/entities/{entity_id}/graph and the ring signals over HTTP (docs/api.md, "Rings"):
// distances, flags, hubs never traversed, the node cap and `truncated`, visibility by role and
// environment, and a score that names the path.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { bearer, describeEachBackend, problem, type TestContext } from '../helpers/app.ts';
import { event, hash, postEvents, score } from '../helpers/trust.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';

const DAY = 86_400_000;
const link = (entity: string, type: string, h: string, age = 20 * DAY) =>
  event('identifier.linked', entity, { linked_identifiers: [{ type, hash: h }] }, age);
const graph = (ctx: TestContext, token: string, id: string, query = '') =>
  ctx.inject({
    method: 'GET',
    url: `/api/v1/trust/entities/${encodeURIComponent(id)}/graph${query}`,
    headers: bearer(token),
  });

interface GraphBody {
  entity_id: string;
  nodes: Array<{ entity_id: string; distance: number; flagged: boolean; flags: string[] }>;
  edges: Array<{ from: string; to: string; type: string; hash: string }>;
  hubs: Array<{ type: string; hash: string; entities: number }>;
  truncated: boolean;
}

describeEachBackend('rings: the entity graph', (ctx) => {
  let admin = '';
  let operator = '';
  // A —device— B —bank account— C (reported for fraud) —phone— D, and a hub (office Wi-Fi) held by A and 30 others.
  const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((x) => hash(`ring-${x}`)) as [string, string, string, string];
  const device = hash('ring-device');
  const bank = hash('ring-bank');
  const phone = hash('ring-phone');
  const hub = hash('ring-hub');
  const hubHolders = Array.from({ length: 30 }, (_, i) => hash(`ring-hub-holder-${i}`));

  before(async () => {
    admin = await ctx().token();
    // The operator's own client sent the history: it sees every name (another client's are redacted,
    // graph-redaction.test.ts).
    operator = await ctx().token(['trust:read', 'trust:write'], 'operator');
    await postEvents(ctx(), operator, [
      link(a, 'device', device),
      link(b, 'device', device),
      link(b, 'bank_account', bank),
      link(c, 'bank_account', bank),
      link(c, 'phone', phone),
      link(d, 'phone', phone),
      link(a, 'other', hub),
      ...hubHolders.map((h) => link(h, 'other', hub)),
      event('fraud.reported', c, {}, 9 * DAY + 3_600_000),
    ]);
  });

  test('depth 2 (the default): distances, flags, edges by identifier, the hub listed and not followed', async () => {
    const res = await graph(ctx(), operator, a);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json() as GraphBody;
    assert.equal(body.entity_id, a);
    assert.deepEqual(body.nodes, [
      { entity_id: a, redacted: false, distance: 0, flagged: false, flags: [] },
      { entity_id: b, redacted: false, distance: 1, flagged: false, flags: [] },
      { entity_id: c, redacted: false, distance: 2, flagged: true, flags: ['fraud_reported'] },
    ]);
    assert.deepEqual(
      body.edges.map((e) => [e.from, e.to, e.type, e.hash]).sort(),
      [
        [a, b, 'device', device],
        [b, c, 'bank_account', bank],
      ].sort(),
    );
    assert.deepEqual(body.hubs, [{ type: 'other', hash: hub, entities: 31 }]);
    assert.equal(body.truncated, false);
    for (const h of hubHolders)
      assert.ok(!body.nodes.some((n) => n.entity_id === h), 'a hub holder is never reached through the hub');
  });

  test('depth 1 and 3; an unknown entity is 404; a depth outside 1…3 is 400', async () => {
    assert.deepEqual(
      ((await graph(ctx(), operator, a, '?depth=1')).json() as GraphBody).nodes.map((n) => n.entity_id),
      [a, b],
    );
    const deep = (await graph(ctx(), operator, a, '?depth=3')).json() as GraphBody;
    assert.deepEqual(
      deep.nodes.map((n) => [n.entity_id, n.distance]),
      [
        [a, 0],
        [b, 1],
        [c, 2],
        [d, 3],
      ],
    );
    problem(await graph(ctx(), operator, hash('ring-never-seen')), 404, 'not_found');
    for (const q of ['?depth=0', '?depth=4', '?depth=two'])
      assert.equal((await graph(ctx(), operator, a, q)).statusCode, 400, q);
  });

  test('a service-role principal gets 403 even with trust:read; an admin is admitted', async () => {
    const service = await ctx().token(['trust:read'], 'service');
    problem(await graph(ctx(), service, a), 403, 'insufficient_scope');
    assert.equal((await graph(ctx(), admin, a)).statusCode, 200);
  });

  test('a test key sees only test data: the live entity is 404 to it, and its own ring is its own', async () => {
    const res = await ctx().inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: bearer(admin),
      payload: { name: 'ring-test', role: 'operator', environment: 'test', scopes: ['trust:read', 'trust:write'] },
    });
    assert.equal(res.statusCode, 201, res.body);
    const key = res.json().key as string;
    const asKey = { 'x-api-key': key };
    problem(
      await ctx().inject({ method: 'GET', url: `/api/v1/trust/entities/${a}/graph`, headers: asKey }),
      404,
      'not_found',
    );
    const other = hash('ring-test-other');
    const ev = await ctx().inject({
      method: 'POST',
      url: '/api/v1/trust/events',
      headers: asKey,
      payload: { events: [link(a, 'device', device), link(other, 'device', device)] },
    });
    assert.equal(ev.statusCode, 200, ev.body);
    const own = (
      await ctx().inject({ method: 'GET', url: `/api/v1/trust/entities/${a}/graph`, headers: asKey })
    ).json() as GraphBody;
    assert.deepEqual(
      own.nodes.map((n) => n.entity_id),
      [a, other],
    );
    const live = (await graph(ctx(), operator, a)).json() as GraphBody;
    assert.ok(!live.nodes.some((n) => n.entity_id === other));
  });

  test('at most 200 nodes, nearest first, and truncated says so', async () => {
    const root = hash('ring-wide-root');
    const events: Record<string, unknown>[] = [];
    for (let i = 0; i < 10; i++) {
      const shared = hash(`ring-wide-id-${i}`);
      events.push(link(root, 'device', shared));
      for (let j = 0; j < 24; j++) events.push(link(hash(`ring-wide-${i}-${j}`), 'device', shared));
    }
    await postEvents(ctx(), operator, events);
    const body = (await graph(ctx(), operator, root, '?depth=1')).json() as GraphBody;
    assert.equal(body.nodes.length, 200);
    assert.equal(body.truncated, true);
    assert.deepEqual(body.nodes[0], { entity_id: root, redacted: false, distance: 0, flagged: false, flags: [] });
    assert.ok(
      body.edges.every(
        (e) => body.nodes.some((n) => n.entity_id === e.from) && body.nodes.some((n) => n.entity_id === e.to),
      ),
    );
    assert.equal(((await graph(ctx(), operator, a)).json() as GraphBody).truncated, false);
  });

  test('the score names the path; its signals still sum to the score', async () => {
    const res = await score(ctx(), admin, { entity_id: a, amount: 100, currency: 'USD' });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json() as {
      score: number;
      signals: Array<{ name: string; value: number; weight: number; description: string }>;
    };
    const ring = body.signals.find((s) => s.name === 'ring_flagged_entities');
    assert.ok(ring, JSON.stringify(body.signals));
    assert.equal(
      ring.description,
      '2 hops from an account reported for fraud 9 days ago, through a shared device and a shared bank account',
    );
    // Two accounts within two hops are no more than a household (docs/signals.md, "Rings"): no ring_size term.
    assert.ok(!body.signals.some((s) => s.name === 'ring_size'), JSON.stringify(body.signals));
    const logit = DEFAULT_POLICY.bias + body.signals.reduce((sum, s) => sum + s.weight * s.value, 0);
    assert.ok(Math.abs(body.score - 100 / (1 + Math.exp(-logit))) <= 0.5 + 1e-6);
  });
});
