// /api/v1/network/* is live data (docs/network.md, "Admin API"): a test-environment admin, even with
// network:admin, gets 404 from every route — it neither sees nor changes the live peers, cannot
// sync, and learns nothing from a malformed body either.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { bearer, describeEachBackend, problem } from '../helpers/app.ts';
import { createClient } from '../../src/auth/clients.ts';
import { networkDb } from '../../src/network/tables.ts';
import { standInPeer } from './support.ts';

const ENTITY = 'a9'.repeat(32);

describeEachBackend('network admin routes are live-only', (ctx) => {
  let live: string;
  let testAdmin: string;
  let peerId: string;

  before(async () => {
    live = await ctx().token();
    const { client, secret } = await createClient(ctx().store.db, {
      name: 'sandbox admin',
      role: 'admin',
      scopes: ['network:admin'],
      environment: 'test',
    });
    const token = await ctx().inject({
      method: 'POST',
      url: '/api/v1/auth/token',
      payload: { client_id: client.client_id, client_secret: secret },
    });
    assert.equal(token.statusCode, 200, token.body);
    assert.equal(token.json().environment, 'test');
    testAdmin = token.json().access_token;
    const res = await ctx().inject({
      method: 'POST',
      url: '/api/v1/network/peers',
      headers: bearer(live),
      payload: { name: 'live-peer', url: 'https://93.184.216.34', signing_key: standInPeer().signingKey },
    });
    assert.equal(res.statusCode, 201, res.body);
    peerId = res.json().id;
  });

  const routes = () =>
    [
      { method: 'GET', url: '/api/v1/network/peers' },
      {
        method: 'POST',
        url: '/api/v1/network/peers',
        payload: { name: 'sandbox-peer', url: 'https://93.184.216.35', signing_key: standInPeer().signingKey },
      },
      { method: 'POST', url: '/api/v1/network/peers', payload: { name: 42 } },
      { method: 'GET', url: `/api/v1/network/peers/${peerId}` },
      { method: 'PATCH', url: `/api/v1/network/peers/${peerId}`, payload: { weight: 10, status: 'suspended' } },
      { method: 'PATCH', url: `/api/v1/network/peers/${peerId}`, payload: { weight: 'heavy' } },
      { method: 'DELETE', url: `/api/v1/network/peers/${peerId}` },
      { method: 'POST', url: '/api/v1/network/sync' },
      { method: 'GET', url: '/api/v1/network/status' },
      { method: 'GET', url: `/api/v1/network/matches?entity_id=${ENTITY}` },
    ] as const;

  test('a test-environment admin gets 404 from every /api/v1/network route, malformed bodies included', async () => {
    const before = await networkDb(ctx().store.db)
      .selectFrom('network_identity')
      .select('state_version')
      .executeTakeFirstOrThrow();
    for (const route of routes()) {
      const res = await ctx().inject({
        method: route.method,
        url: route.url,
        headers: bearer(testAdmin),
        ...('payload' in route ? { payload: route.payload } : {}),
      });
      problem(res, 404, 'not_found');
    }
    const peers = await networkDb(ctx().store.db)
      .selectFrom('network_peers')
      .select(['id', 'status', 'weight', 'name'])
      .execute();
    assert.deepEqual(
      peers.map((p) => ({ ...p, weight: Number(p.weight) })),
      [{ id: peerId, status: 'active', weight: 1, name: 'live-peer' }],
    );
    const after = await networkDb(ctx().store.db)
      .selectFrom('network_identity')
      .select('state_version')
      .executeTakeFirstOrThrow();
    assert.equal(Number(after.state_version), Number(before.state_version), 'no sync ran and no peer changed');
  });

  test('a live admin still reaches every route', async () => {
    for (const route of routes()) {
      if (route.method === 'DELETE' || route.method === 'POST') continue;
      if (route.method === 'PATCH' && typeof route.payload.weight !== 'number') continue;
      const res = await ctx().inject({
        method: route.method,
        url: route.url,
        headers: bearer(live),
        ...('payload' in route ? { payload: { weight: 2 } } : {}),
      });
      assert.equal(res.statusCode, 200, `${route.method} ${route.url}: ${res.body}`);
    }
  });
});
