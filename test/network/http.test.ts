// The network over HTTP in one process: the descriptor, peers CRUD (scope and role refusals, URL
// rules), signed peer requests (forged, replayed, unknown, suspended, stale), the evaluate budget,
// and publishing (a flagged identifier appears under the PRF tag, erasure withdraws it).
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';
import { HEADER, verifyResponse } from '../../src/network/peer-auth.ts';
import { resolveAt, signedInject, standInPeer } from './support.ts';

const PEERS = '/api/v1/network/peers';
const PUBLIC_URL = 'https://93.184.216.34';
const PHONE = 'c4d29e1f'.repeat(8);

describeEachBackend('Network over HTTP', (ctx) => {
  let admin: string;
  let descriptor: { name: string; signing_key: string; oprf_public_key: string; endpoints: Record<string, string> };
  const addPeer = (payload: object, token = admin) =>
    ctx().inject({ method: 'POST', url: PEERS, headers: bearer(token), payload });

  before(async () => {
    admin = await ctx().token();
    const res = await ctx().inject({
      method: 'GET',
      url: '/network/v1/descriptor',
      headers: { [HEADER.nonce]: 'descriptor-nonce-0001' },
    });
    assert.equal(res.statusCode, 200);
    descriptor = res.json();
    assert.ok(
      verifyResponse(descriptor.signing_key, 200, 'descriptor-nonce-0001', res.headers, res.body),
      'the descriptor is signed by its own key',
    );
  });

  test('descriptor: name, keys and absolute endpoints, no credentials needed', () => {
    assert.equal(descriptor.name, 'vouch');
    assert.match(descriptor.signing_key, /^[A-Za-z0-9_-]{43}$/);
    assert.match(descriptor.oprf_public_key, /^[A-Za-z0-9_-]{43}$/);
    assert.match(descriptor.endpoints.flags!, /^http:\/\/.+\/network\/v1\/flags$/);
    assert.match(descriptor.endpoints.evaluate!, /\/network\/v1\/evaluate$/);
  });

  test("the identity's private keys are sealed at rest", async () => {
    const row = await ctx()
      .store.db.withTables<{ network_identity: { signing_private: string; oprf_secret: string } }>()
      .selectFrom('network_identity')
      .selectAll()
      .executeTakeFirstOrThrow();
    assert.equal(JSON.parse(row.signing_private).sealed, 'A256GCM');
    assert.equal(JSON.parse(row.oprf_secret).sealed, 'A256GCM');
    assert.ok(!row.signing_private.includes('"d"'));
  });

  test('peers: create (201, Location, defaults), list, read, patch, delete', async () => {
    const peer = standInPeer();
    const res = await addPeer({ name: 'market-b', url: `${PUBLIC_URL}/`, signing_key: peer.signingKey });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.match(body.id, /^peer_[0-9A-Z]{26}$/);
    assert.equal(res.headers.location, `${PEERS}/${body.id}`);
    assert.deepEqual(
      { ...body, id: undefined },
      {
        id: undefined,
        name: 'market-b',
        url: PUBLIC_URL,
        signing_key: peer.signingKey,
        status: 'active',
        weight: 1,
        publish: ['fraud_report', 'chargeback', 'blocklisted', 'dispute_lost'],
        last_sync_at: null,
        budget_per_day: 2000,
      },
    );
    assert.ok(
      (await ctx().inject({ method: 'GET', url: PEERS, headers: bearer(admin) }))
        .json()
        .data.some((p: { id: string }) => p.id === body.id),
    );
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `${PEERS}/${body.id}`, headers: bearer(admin) })).json().name,
      'market-b',
    );
    const patched = await ctx().inject({
      method: 'PATCH',
      url: `${PEERS}/${body.id}`,
      headers: bearer(admin),
      payload: { status: 'suspended', weight: 0.5, publish: ['chargeback'], budget_per_day: 5 },
    });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.deepEqual(
      [patched.json().status, patched.json().weight, patched.json().publish, patched.json().budget_per_day],
      ['suspended', 0.5, ['chargeback'], 5],
    );
    problem(
      await ctx().inject({ method: 'PATCH', url: `${PEERS}/${body.id}`, headers: bearer(admin), payload: {} }),
      400,
      'validation_failed',
    );
    problem(await addPeer({ name: 'again', url: PUBLIC_URL, signing_key: peer.signingKey }), 409, 'conflict');
    assert.deepEqual(
      (await ctx().inject({ method: 'DELETE', url: `${PEERS}/${body.id}`, headers: bearer(admin) })).json(),
      { id: body.id, deleted: true },
    );
    problem(
      await ctx().inject({ method: 'GET', url: `${PEERS}/${body.id}`, headers: bearer(admin) }),
      404,
      'not_found',
    );
    problem(await ctx().inject({ method: 'GET', url: `${PEERS}/peer_nope`, headers: bearer(admin) }), 404, 'not_found');
  });

  test('peers: scope network:admin and role admin are both required', async () => {
    const operator = await ctx().token(['network:admin'], 'operator');
    const adminWithoutScope = await ctx().token(['webhooks:write'], 'admin');
    for (const token of [operator, adminWithoutScope]) {
      const res = problem(
        await ctx().inject({ method: 'GET', url: PEERS, headers: bearer(token) }),
        403,
        'insufficient_scope',
      );
      assert.match(String(res.detail), /network:admin/);
      problem(
        await addPeer({ name: 'x', url: PUBLIC_URL, signing_key: standInPeer().signingKey }, token),
        403,
        'insufficient_scope',
      );
      problem(
        await ctx().inject({ method: 'POST', url: '/api/v1/network/sync', headers: bearer(token) }),
        403,
        'insufficient_scope',
      );
    }
    problem(await ctx().inject({ method: 'GET', url: PEERS }), 401, 'unauthenticated');
  });

  test('peers: URL rules as for webhooks (https, public addresses), and key checks', async () => {
    const key = standInPeer().signingKey;
    for (const url of [
      'http://93.184.216.34',
      'https://127.0.0.1:8443',
      'https://10.1.2.3',
      'https://[::1]',
      'ftp://93.184.216.34',
      'https://user:pw@93.184.216.34',
      'not a url',
    ]) {
      const body = problem(await addPeer({ name: 'x', url, signing_key: key }), 400, 'validation_failed');
      assert.equal((body.errors as Array<{ field: string }>)[0]!.field, 'url', url);
    }
    problem(await addPeer({ name: 'x', url: PUBLIC_URL, signing_key: 'short' }), 400, 'validation_failed');
    problem(
      await addPeer({ name: 'x', url: PUBLIC_URL, signing_key: descriptor.signing_key }),
      400,
      'validation_failed',
    );
    problem(
      await addPeer({ name: 'x', url: PUBLIC_URL, signing_key: key, publish: ['everything'] }),
      400,
      'validation_failed',
    );
    problem(await addPeer({ name: 'x', url: PUBLIC_URL, signing_key: key, weight: -1 }), 400, 'validation_failed');
  });

  test('signed requests: a valid one passes; unsigned, unknown, forged, replayed, stale and suspended ones are refused', async () => {
    const peer = standInPeer();
    const id = (await addPeer({ name: 'signed', url: PUBLIC_URL, signing_key: peer.signingKey })).json().id as string;
    const ok = await signedInject(ctx(), peer, 'GET', '/network/v1/flags');
    assert.equal(ok.statusCode, 200, ok.body);
    assert.ok(
      verifyResponse(descriptor.signing_key, 200, ok.sent[HEADER.nonce]!, ok.headers, ok.body),
      'the answer is signed for this nonce',
    );
    assert.ok(
      !verifyResponse(descriptor.signing_key, 200, 'another-nonce-000001', ok.headers, ok.body),
      'and only for this nonce',
    );

    problem(await ctx().inject({ method: 'GET', url: '/network/v1/flags' }), 401, 'unauthenticated');
    problem(await signedInject(ctx(), standInPeer(), 'GET', '/network/v1/flags'), 401, 'unauthenticated');
    // Signed by another key while naming the peer's: a forgery.
    const forger = { ...standInPeer(), signingKey: peer.signingKey };
    problem(await signedInject(ctx(), forger, 'GET', '/network/v1/flags'), 401, 'unauthenticated');
    // The signature covers the path: the same headers on another query do not verify.
    const headers = ok.sent;
    const pick = (h: Record<string, string>) => Object.fromEntries(Object.values(HEADER).map((k) => [k, h[k]!]));
    problem(
      await ctx().inject({ method: 'GET', url: '/network/v1/flags?limit=1', headers: pick(headers) }),
      401,
      'unauthenticated',
    );
    // The very same request again: a replay.
    const replay = problem(
      await ctx().inject({ method: 'GET', url: '/network/v1/flags', headers: pick(headers) }),
      401,
      'unauthenticated',
    );
    assert.match(String(replay.detail), /replay/);
    const stale = String(Math.floor(Date.now() / 1000) - 3600);
    problem(
      await signedInject(ctx(), peer, 'GET', '/network/v1/flags', undefined, { [HEADER.timestamp]: stale }),
      401,
      'unauthenticated',
    );
    await ctx().inject({
      method: 'PATCH',
      url: `${PEERS}/${id}`,
      headers: bearer(admin),
      payload: { status: 'suspended' },
    });
    problem(await signedInject(ctx(), peer, 'GET', '/network/v1/flags'), 403, 'insufficient_scope');
    problem(
      await signedInject(ctx(), peer, 'POST', '/network/v1/evaluate', { elements: [descriptor.oprf_public_key] }),
      403,
      'insufficient_scope',
    );
  });

  test('evaluate: a verifiable answer within the budget, 429 with Retry-After beyond; bad elements are 400', async () => {
    const peer = standInPeer();
    await addPeer({ name: 'budgeted', url: PUBLIC_URL, signing_key: peer.signingKey, budget_per_day: 4 });
    const ids = [
      { type: 'phone', hash: 'aa'.repeat(32) },
      { type: 'email', hash: 'bb'.repeat(32) },
    ];
    const resolved = await resolveAt(ctx(), peer, descriptor.oprf_public_key, ids);
    assert.equal(resolved.length, 2);
    // A refused element is charged like a valid one (checking it is CPU too); an empty batch is refused by the schema.
    problem(
      await signedInject(ctx(), peer, 'POST', '/network/v1/evaluate', { elements: ['A'.repeat(43)] }),
      400,
      'validation_failed',
    );
    problem(
      await signedInject(ctx(), peer, 'POST', '/network/v1/evaluate', { elements: [] }),
      400,
      'validation_failed',
    );
    const over = problem(
      await signedInject(ctx(), peer, 'POST', '/network/v1/evaluate', {
        elements: [descriptor.oprf_public_key, descriptor.oprf_public_key],
      }),
      429,
      'rate_limited',
    );
    assert.match(String(over.detail), /budget/);
    const retry = Number(
      (
        await signedInject(ctx(), peer, 'POST', '/network/v1/evaluate', {
          elements: [descriptor.oprf_public_key, descriptor.oprf_public_key],
        })
      ).headers['retry-after'],
    );
    // The budget is counted over the last 24 hours in ten-minute slots: what was spent comes back within 24 h 10 min.
    assert.ok(retry >= 1 && retry <= 87_000);
    // One left in the window: it is still granted.
    assert.equal(
      (await signedInject(ctx(), peer, 'POST', '/network/v1/evaluate', { elements: [descriptor.oprf_public_key] }))
        .statusCode,
      200,
    );
  });

  test('publishing: a flagged identifier is served under its PRF tag, opens only for its holder, and erasure withdraws it', async () => {
    const peer = standInPeer();
    await addPeer({
      name: 'reader',
      url: PUBLIC_URL,
      signing_key: peer.signingKey,
      publish: ['fraud_report', 'chargeback'],
    });
    const entity = 'e1'.repeat(32);
    const events = await ctx().inject({
      method: 'POST',
      url: '/api/v1/trust/events',
      headers: bearer(admin),
      payload: {
        events: [
          {
            event_id: 'net-1',
            type: 'fraud.reported',
            entity_id: entity,
            occurred_at: '2026-10-03T10:00:00Z',
            linked_identifiers: [{ type: 'phone', hash: PHONE }],
          },
          { event_id: 'net-2', type: 'entity.blocklisted', entity_id: entity, occurred_at: '2026-10-04T10:00:00Z' },
        ],
      },
    });
    assert.equal(events.statusCode, 200, events.body);
    const first = await signedInject(ctx(), peer, 'GET', '/network/v1/flags');
    const page = first.json() as {
      epoch: string;
      entries: Array<{ tag: string; sealed?: string }>;
      since: string;
      next_cursor: string | null;
    };
    assert.equal(page.entries.length, 1);
    assert.ok(!first.body.includes(PHONE) && !first.body.includes(entity));
    const [mine, other] = await resolveAt(ctx(), peer, descriptor.oprf_public_key, [
      { type: 'phone', hash: PHONE },
      { type: 'phone', hash: 'dd'.repeat(32) },
    ]);
    assert.equal(page.entries[0]!.tag, mine!.tag);
    // Blocklisting is not published to this peer: only the kinds it was given.
    assert.deepEqual(mine!.open(page.entries[0]!.sealed!), { kinds: { fraud_report: 1 }, latest_month: '2026-10' });
    assert.equal(other!.open(page.entries[0]!.sealed!), undefined);
    const status = (
      await ctx().inject({ method: 'GET', url: '/api/v1/network/status', headers: bearer(admin) })
    ).json();
    assert.equal(status.published, 1);
    assert.equal(status.peers.find((p: { name: string }) => p.name === 'reader').evaluations_today, 2);
    // Nothing changed: an incremental pull is empty.
    assert.equal(
      (await signedInject(ctx(), peer, 'GET', `/network/v1/flags?since=${page.since}`)).json().entries.length,
      0,
    );
    const erased = await ctx().inject({
      method: 'DELETE',
      url: `/api/v1/trust/entities/${entity}`,
      headers: bearer(admin),
    });
    assert.equal(erased.statusCode, 200, erased.body);
    const after = (await signedInject(ctx(), peer, 'GET', `/network/v1/flags?since=${page.since}`)).json();
    assert.deepEqual(after.entries, [{ tag: mine!.tag, withdrawn: true }]);
    assert.equal(after.epoch, page.epoch);
  });
});
