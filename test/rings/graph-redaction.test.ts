// Issue 29 item 12: the ring graph does not cross clients (docs/api.md, "Rings"). A non-admin sees
// the whole structure (distances, flags, hubs' sizes) but not another client's names: an entity its
// client never sent is `redacted-<n>`, a hash its client never linked is null, and neither appears
// anywhere in the answer. An admin sees every name.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { bearer, describeEachBackend, type TestContext } from '../helpers/app.ts';
import { event, hash, postEvents } from '../helpers/trust.ts';

const DAY = 86_400_000;
const link = (entity: string, type: string, h: string) =>
  event('identifier.linked', entity, { linked_identifiers: [{ type, hash: h }] }, 20 * DAY);
const graph = async (ctx: TestContext, token: string, id: string) => {
  const res = await ctx.inject({
    method: 'GET',
    url: `/api/v1/trust/entities/${id}/graph?depth=3`,
    headers: bearer(token),
  });
  assert.equal(res.statusCode, 200, res.body);
  return { text: res.body, body: res.json() as Graph };
};

interface Graph {
  nodes: Array<{ entity_id: string; redacted: boolean; distance: number; flagged: boolean; flags: string[] }>;
  edges: Array<{ from: string; to: string; type: string; hash: string | null }>;
  hubs: Array<{ type: string; hash: string | null; entities: number }>;
}

describeEachBackend('rings: the graph across clients', (ctx) => {
  let mine = '';
  let theirs = '';
  let admin = '';
  // Mine: my account holds a phone. Theirs: their account holds the same phone (the only identifier
  // both sent) and an e-mail shared with a second account of theirs, reported for fraud; the
  // e-mail is also on 30 more of their accounts' siblings through a hub device.
  const [myAccount, theirAccount, theirSecond] = ['mine', 'theirs', 'theirs-2'].map((x) => hash(`redact-${x}`)) as [
    string,
    string,
    string,
  ];
  const phone = hash('redact-phone');
  const email = hash('redact-email');
  const device = hash('redact-hub-device');
  const hubHolders = Array.from({ length: 30 }, (_, i) => hash(`redact-hub-${i}`));

  before(async () => {
    admin = await ctx().token();
    mine = await ctx().token(['trust:read', 'trust:write'], 'operator');
    theirs = await ctx().token(['trust:read', 'trust:write'], 'operator');
    await postEvents(ctx(), mine, [link(myAccount, 'phone', phone)]);
    await postEvents(ctx(), theirs, [
      link(theirAccount, 'phone', phone),
      link(theirAccount, 'email', email),
      link(theirSecond, 'email', email),
      link(theirAccount, 'device', device),
      ...hubHolders.map((h) => link(h, 'device', device)),
      event('fraud.reported', theirSecond, {}, DAY),
    ]);
  });

  test("an operator sees the other client's accounts as placeholders and their hashes as null, with the structure intact", async () => {
    const { text, body } = await graph(ctx(), mine, myAccount);
    for (const secret of [theirAccount, theirSecond, email, device, ...hubHolders])
      assert.ok(!text.includes(secret), `${secret} leaked`);
    assert.deepEqual(
      body.nodes.map((n) => [n.entity_id, n.redacted, n.distance, n.flags]),
      [
        [myAccount, false, 0, []],
        ['redacted-1', true, 1, []],
        ['redacted-2', true, 2, ['fraud_reported']],
      ],
    );
    // The phone it sent keeps its hash; the e-mail it never sent does not.
    assert.deepEqual(
      body.edges.map((e) => [e.from, e.to, e.type, e.hash]).sort(),
      [
        [myAccount, 'redacted-1', 'phone', phone],
        ['redacted-1', 'redacted-2', 'email', null],
      ].sort(),
    );
    assert.deepEqual(body.hubs, [{ type: 'device', hash: null, entities: 31 }]);
  });

  test('the other client sees its own names and mine redacted; the phone both sent is named for both', async () => {
    const { text, body } = await graph(ctx(), theirs, theirAccount);
    assert.ok(!text.includes(myAccount));
    const byDistance = body.nodes.map((n) => [n.entity_id, n.redacted]);
    assert.deepEqual(
      byDistance.sort(),
      [
        [theirAccount, false],
        [theirSecond, false],
        ['redacted-1', true],
      ].sort(),
    );
    assert.ok(
      body.edges.some((e) => e.to === 'redacted-1' && e.hash === phone) ||
        body.edges.some((e) => e.from === 'redacted-1' && e.hash === phone),
    );
    assert.deepEqual(body.hubs, [{ type: 'device', hash: device, entities: 31 }]);
  });

  test('an admin sees every name', async () => {
    const { body } = await graph(ctx(), admin, myAccount);
    assert.deepEqual(
      body.nodes.map((n) => [n.entity_id, n.redacted]),
      [
        [myAccount, false],
        [theirAccount, false],
        [theirSecond, false],
      ],
    );
    assert.ok(body.edges.every((e) => e.hash !== null));
    assert.deepEqual(body.hubs, [{ type: 'device', hash: device, entities: 31 }]);
  });
});
