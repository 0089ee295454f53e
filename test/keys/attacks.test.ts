// The API key attack matrix: deactivated, expired, rotated and malformed keys; BOLA between
// clients; scope and role escalation; mass assignment.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { describeEachBackend, bearer, problem, ADMIN_ID } from '../helpers/app.ts';
import { generateApiKey } from '../../src/keys/format.ts';
import { deactivateKey } from '../../src/keys/repository.ts';
import { ChangeFeed } from '../../src/store/change-feed.ts';
import { eventually, header, secondStore } from '../auth/support.ts';

const KEYS = '/api/v1/keys';

type Created = { id: string; key: string; status: string; expires_at: string | null; owner_client_id: string };

function invalidKey(res: LightMyRequestResponse): void {
  problem(res, 401, 'unauthenticated');
  assert.equal(header(res, 'www-authenticate'), 'Bearer realm="vouch", error="invalid_token"');
}

describeEachBackend('API key attacks', (ctx) => {
  let admin: string;
  const withKey = (key: string) => ctx().inject({ method: 'GET', url: KEYS, headers: { 'x-api-key': key } });
  const create = async (token: string, payload: object): Promise<Created> => {
    const res = await ctx().inject({ method: 'POST', url: KEYS, headers: bearer(token), payload });
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as Created;
  };
  const rotate = (token: string, id: string, payload: object = {}) =>
    ctx().inject({ method: 'POST', url: `${KEYS}/${id}/rotate`, headers: bearer(token), payload });

  before(async () => {
    admin = await ctx().token();
  });

  test('deactivated key: 401 invalid_token on the very next request', async () => {
    const k = await create(admin, { name: 'victim', scopes: ['keys:read'] });
    assert.equal((await withKey(k.key)).statusCode, 200); // now cached by the verifier
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: `${KEYS}/${k.id}`, headers: bearer(admin) })).statusCode,
      200,
    );
    invalidKey(await withKey(k.key));
  });

  test('key deactivated by another process: 401 invalid_token on the next request', async () => {
    const k = await create(admin, { name: 'elsewhere', scopes: ['keys:read'] });
    assert.equal((await withKey(k.key)).statusCode, 200);
    const other = secondStore(ctx().store);
    try {
      await deactivateKey(other.db, new ChangeFeed(other), k.id, undefined);
    } finally {
      await other.close();
    }
    if (ctx().backend === 'sqlite') invalidKey(await withKey(k.key));
    else await eventually(async () => (await withKey(k.key)).statusCode === 401);
    invalidKey(await withKey(k.key));
  });

  test('expired key: 401 invalid_token once expires_at passes, listed as expired; rotating it: 409 conflict', async () => {
    const expiresAt = Date.now() + 1200;
    const k = await create(admin, {
      name: 'short-lived',
      scopes: ['keys:read'],
      expires_at: new Date(expiresAt).toISOString(),
    });
    assert.equal((await withKey(k.key)).statusCode, 200);
    await new Promise((r) => setTimeout(r, expiresAt - Date.now() + 50));
    invalidKey(await withKey(k.key));
    const listed = (await ctx().inject({ method: 'GET', url: `${KEYS}?status=expired`, headers: bearer(admin) })).json()
      .data as Created[];
    assert.deepEqual(
      listed.map((x) => x.id),
      [k.id],
    );
    problem(await rotate(admin, k.id), 409, 'conflict');
    // An expired key can still be deactivated.
    const del = await ctx().inject({ method: 'DELETE', url: `${KEYS}/${k.id}`, headers: bearer(admin) });
    assert.equal(del.json().status, 'inactive');
  });

  test('rotated key with grace 0: old key 401 invalid_token at once, new key 200', async () => {
    const old = await create(admin, { name: 'rotate-now', scopes: ['keys:read'] });
    assert.equal((await withKey(old.key)).statusCode, 200);
    const res = await rotate(admin, old.id, { grace_period_seconds: 0 });
    assert.equal(res.statusCode, 201);
    invalidKey(await withKey(old.key));
    assert.equal((await withKey(res.json().key)).statusCode, 200);
    const listed = (await ctx().inject({ method: 'GET', url: KEYS, headers: bearer(admin) })).json().data as Created[];
    assert.equal(listed.find((x) => x.id === old.id)!.status, 'expired');
  });

  test('rotated key with grace > 0: both keys 200, the old one with expires_at set', async () => {
    const old = await create(admin, { name: 'rotate-later', scopes: ['keys:read'] });
    assert.equal((await withKey(old.key)).statusCode, 200);
    const res = await rotate(admin, old.id, { grace_period_seconds: 600 });
    assert.equal(res.statusCode, 201);
    assert.equal((await withKey(old.key)).statusCode, 200);
    assert.equal((await withKey(res.json().key)).statusCode, 200);
    const listed = (await ctx().inject({ method: 'GET', url: KEYS, headers: bearer(admin) })).json().data as Created[];
    const record = listed.find((x) => x.id === old.id)!;
    assert.equal(record.status, 'active');
    assert.ok(record.expires_at !== null && Date.parse(record.expires_at) > Date.now() + 590_000);
  });

  test('rotating an inactive key: 409 conflict', async () => {
    const k = await create(admin, { name: 'dead', scopes: ['keys:read'] });
    await ctx().inject({ method: 'DELETE', url: `${KEYS}/${k.id}`, headers: bearer(admin) });
    problem(await rotate(admin, k.id), 409, 'conflict');
  });

  test('key with a wrong checksum (last char flipped): 401 invalid_token', async () => {
    const k = await create(admin, { name: 'checksum', scopes: ['keys:read'] });
    const last = k.key.at(-1)!;
    invalidKey(await withKey(k.key.slice(0, -1) + (last === 'a' ? 'b' : 'a')));
    assert.equal((await withKey(k.key)).statusCode, 200);
  });

  test('key of another environment, unknown well-formed key, or garbage: 401 invalid_token', async () => {
    const k = await create(admin, { name: 'env', scopes: ['keys:read'] });
    const garbage = [
      k.key.replace('vch_live_', 'vch_test_'),
      k.key.replace('vch_live_', 'vch_prod_'),
      generateApiKey('live'),
      generateApiKey('test'),
      'garbage',
      '',
      k.key.slice(0, 16),
      `${k.key} `.repeat(2),
      `Bearer ${k.key}`,
    ];
    for (const value of garbage) invalidKey(await withKey(value));
  });

  test("BOLA: a non-admin does not see another client's key (200 without it), and DELETE and rotate of it: 404 not_found", async () => {
    const a = await ctx().token(['keys:read', 'keys:write']);
    const b = await ctx().token(['keys:read', 'keys:write']);
    const aKey = await create(a, { name: 'A key', scopes: ['keys:read'] });
    const bKey = await create(b, { name: 'B key', scopes: ['keys:read'] });
    const bList = (await ctx().inject({ method: 'GET', url: KEYS, headers: bearer(b) })).json().data as Created[];
    assert.deepEqual(
      bList.map((x) => x.id),
      [bKey.id],
    );
    const notFound = problem(
      await ctx().inject({ method: 'DELETE', url: `${KEYS}/${aKey.id}`, headers: bearer(b) }),
      404,
      'not_found',
    );
    const unknown = problem(
      await ctx().inject({ method: 'DELETE', url: `${KEYS}/key_01ARZ3NDEKTSV4RRFFQ69G5FAV`, headers: bearer(b) }),
      404,
      'not_found',
    );
    assert.equal(notFound.detail, unknown.detail, 'same answer as a key that does not exist');
    problem(await rotate(b, aKey.id), 404, 'not_found');
    // Nor through B's API key, nor by paging with A's id as a cursor.
    const bApiKey = await create(b, { name: 'B api key', scopes: ['keys:read', 'keys:write'] });
    const viaKey = (await withKey(bApiKey.key)).json().data as Created[];
    assert.ok(viaKey.every((x) => x.owner_client_id !== aKey.owner_client_id));
    problem(
      await ctx().inject({ method: 'DELETE', url: `${KEYS}/${aKey.id}`, headers: { 'x-api-key': bApiKey.key } }),
      404,
      'not_found',
    );
    const paged = (
      await ctx().inject({ method: 'GET', url: `${KEYS}?cursor=key_7ZZZZZZZZZZZZZZZZZZZZZZZZZ`, headers: bearer(b) })
    ).json().data as Created[];
    assert.ok(paged.every((x) => x.owner_client_id !== aKey.owner_client_id));
    // A's key is untouched and still works.
    assert.equal((await withKey(aKey.key)).statusCode, 200);
    // The admin sees both and may deactivate either.
    const adminList = (await ctx().inject({ method: 'GET', url: KEYS, headers: bearer(admin) })).json()
      .data as Created[];
    assert.ok(adminList.some((x) => x.id === aKey.id) && adminList.some((x) => x.id === bKey.id));
    const del = await ctx().inject({ method: 'DELETE', url: `${KEYS}/${aKey.id}`, headers: bearer(admin) });
    assert.equal(del.statusCode, 200);
    assert.equal(del.json().owner_client_id, aKey.owner_client_id);
  });

  test('escalation: creating a key with a scope the creator lacks: 403 insufficient_scope', async () => {
    const token = await ctx().token(['keys:read', 'keys:write']);
    const res = await ctx().inject({
      method: 'POST',
      url: KEYS,
      headers: bearer(token),
      payload: { name: 'more', scopes: ['keys:read', 'audit:read'] },
    });
    const body = problem(res, 403, 'insufficient_scope');
    assert.match(String(body.detail), /audit:read/);
  });

  test('escalation: creating a key with a higher role than the creator: 403 insufficient_scope', async () => {
    const token = await ctx().token(['keys:read', 'keys:write'], 'operator');
    problem(
      await ctx().inject({
        method: 'POST',
        url: KEYS,
        headers: bearer(token),
        payload: { name: 'boss', scopes: ['keys:read'], role: 'admin' },
      }),
      403,
      'insufficient_scope',
    );
    // Equal role is fine.
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: KEYS,
          headers: bearer(token),
          payload: { name: 'peer', scopes: ['keys:read'], role: 'operator' },
        })
      ).statusCode,
      201,
    );
  });

  test('escalation through an API key: it cannot mint a key with more scopes than itself (403), and a down-scoped token neither', async () => {
    const narrow = await create(admin, { name: 'narrow', scopes: ['keys:write'] });
    const res = await ctx().inject({
      method: 'POST',
      url: KEYS,
      headers: { 'x-api-key': narrow.key },
      payload: { name: 'wider', scopes: ['keys:write', 'trust:read'] },
    });
    problem(res, 403, 'insufficient_scope');
    const roleUp = await ctx().inject({
      method: 'POST',
      url: KEYS,
      headers: { 'x-api-key': narrow.key },
      payload: { name: 'up', scopes: ['keys:write'], role: 'operator' },
    });
    problem(roleUp, 403, 'insufficient_scope');
    const scoped = (
      await ctx().inject({
        method: 'POST',
        url: '/api/v1/auth/token',
        payload: { client_id: ADMIN_ID, client_secret: 'admin-test-secret-0123456789', scope: 'keys:write' },
      })
    ).json().access_token as string;
    problem(
      await ctx().inject({
        method: 'POST',
        url: KEYS,
        headers: bearer(scoped),
        payload: { name: 'x', scopes: ['audit:read'] },
      }),
      403,
      'insufficient_scope',
    );
  });

  test('escalation through rotation: a narrow key cannot rotate a wider key of its own client (403), a wide enough one can (201)', async () => {
    const token = await ctx().token(['keys:read', 'keys:write', 'trust:read'], 'operator');
    const narrow = await create(token, { name: 'narrow', scopes: ['keys:write'] });
    const wide = await create(token, { name: 'wide', scopes: ['trust:read'], role: 'operator' });
    const res = await ctx().inject({
      method: 'POST',
      url: `${KEYS}/${wide.id}/rotate`,
      headers: { 'x-api-key': narrow.key },
      payload: {},
    });
    problem(res, 403, 'insufficient_scope');
    assert.equal(
      (await ctx().inject({ method: 'GET', url: KEYS, headers: bearer(token) }))
        .json()
        .data.find((x: Created) => x.id === wide.id).expires_at,
      null,
    );
    const peer = await create(token, { name: 'peer', scopes: ['keys:write'] });
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: `${KEYS}/${peer.id}/rotate`,
          headers: { 'x-api-key': narrow.key },
          payload: {},
        })
      ).statusCode,
      201,
    );
    assert.equal((await rotate(token, wide.id)).statusCode, 201);
  });

  test('mass assignment: owner_client_id, status, id, key_hash, key in the body: 400 validation_failed listing each unknown field', async () => {
    const res = await ctx().inject({
      method: 'POST',
      url: KEYS,
      headers: bearer(admin),
      payload: {
        name: 'sneaky',
        scopes: ['keys:read'],
        owner_client_id: 'someone',
        status: 'active',
        id: 'key_01ARZ3NDEKTSV4RRFFQ69G5FAV',
        key_hash: '00',
        key: 'vch_live_x',
        created_at: '2020-01-01T00:00:00Z',
      },
    });
    const body = problem(res, 400, 'validation_failed');
    const unknown = (body.errors as { field: string; message: string }[])
      .filter((e) => e.message === 'is not a known field')
      .map((e) => e.field)
      .sort();
    assert.deepEqual(unknown, ['created_at', 'id', 'key', 'key_hash', 'owner_client_id', 'status']);
    // Nothing was created.
    const all = (await ctx().inject({ method: 'GET', url: KEYS, headers: bearer(admin) })).json().data as {
      name: string;
    }[];
    assert.ok(!all.some((k) => k.name === 'sneaky'));
    // The same for rotate.
    const k = await create(admin, { name: 'rot', scopes: ['keys:read'] });
    const rot = problem(
      await rotate(admin, k.id, { grace_period_seconds: 0, owner_client_id: 'x', scopes: ['audit:read'] }),
      400,
      'validation_failed',
    );
    assert.deepEqual((rot.errors as { field: string }[]).map((e) => e.field).sort(), ['owner_client_id', 'scopes']);
  });
});
