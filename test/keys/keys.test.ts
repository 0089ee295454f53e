// /api/v1/keys: create, list (filter, pagination), deactivate, rotate, last_used_at.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem, ADMIN_ID } from '../helpers/app.ts';
import { parseApiKey } from '../../src/keys/format.ts';
import { sha256Hex } from '../../src/lib/digest.ts';
import { SCOPES } from '../../src/lib/principal.ts';

const KEYS = '/api/v1/keys';
const RECORD_FIELDS = [
  'created_at',
  'created_by',
  'deactivated_at',
  'environment',
  'expires_at',
  'id',
  'last_used_at',
  'name',
  'owner_client_id',
  'prefix',
  'role',
  'scopes',
  'status',
];
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const KEY_ID = /^key_[0-9A-HJKMNP-TV-Z]{26}$/;

type KeyRecord = Record<string, unknown> & { id: string; key?: string; status: string; expires_at: string | null };

describeEachBackend('API key endpoints', (ctx) => {
  let admin: string;
  const create = (token: string, payload: object) =>
    ctx().inject({ method: 'POST', url: KEYS, headers: bearer(token), payload });
  const list = async (token: string, query = '') => {
    const res = await ctx().inject({ method: 'GET', url: `${KEYS}${query}`, headers: bearer(token) });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as { data: KeyRecord[]; next_cursor: string | null };
  };

  before(async () => {
    admin = await ctx().token();
  });

  test('create: 201 with Location and exactly the contract record plus the key, shown once', async () => {
    const before = Date.now();
    const res = await create(admin, { name: 'checkout service', scopes: ['trust:read', 'dispute:analyze'] });
    assert.equal(res.statusCode, 201);
    const body = res.json() as KeyRecord & { key: string };
    assert.deepEqual(Object.keys(body).sort(), [...RECORD_FIELDS, 'key'].sort());
    assert.match(body.id, KEY_ID);
    assert.equal(res.headers.location, `${KEYS}/${body.id}`);
    assert.equal(body.name, 'checkout service');
    assert.deepEqual(body.scopes, ['trust:read', 'dispute:analyze']);
    assert.equal(body.role, 'service');
    assert.equal(body.environment, 'live');
    assert.equal(body.status, 'active');
    assert.equal(body.owner_client_id, ADMIN_ID);
    assert.match(String(body.created_at), ISO);
    assert.ok(
      Date.parse(String(body.created_at)) >= before - 5 && Date.parse(String(body.created_at)) <= Date.now() + 5,
    );
    assert.equal(body.expires_at, null);
    assert.equal(body.last_used_at, null);
    assert.equal(body.deactivated_at, null);
    assert.deepEqual(parseApiKey(body.key), { env: 'live' });
    assert.equal(body.prefix, body.key.slice(0, 16));
    // Only the digest is stored; listings never show the key again.
    const row = await ctx()
      .store.db.selectFrom('api_keys')
      .selectAll()
      .where('id', '=', body.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.key_hash, sha256Hex(body.key));
    assert.ok(!Object.values(row).includes(body.key));
    const listed = (await list(admin)).data.find((k) => k.id === body.id)!;
    assert.deepEqual(Object.keys(listed).sort(), RECORD_FIELDS);
    assert.ok(!JSON.stringify(await list(admin)).includes(body.key));
  });

  test('create with role, environment test and expires_at: 201 with a vch_test_ key and the expiry echoed', async () => {
    const expires = new Date(Date.now() + 3_600_000).toISOString();
    const res = await create(admin, {
      name: 'staging',
      scopes: ['keys:read'],
      role: 'operator',
      environment: 'test',
      expires_at: expires,
    });
    assert.equal(res.statusCode, 201);
    const body = res.json() as KeyRecord & { key: string };
    assert.equal(body.role, 'operator');
    assert.equal(body.environment, 'test');
    assert.ok(body.key.startsWith('vch_test_'));
    assert.deepEqual(parseApiKey(body.key), { env: 'test' });
    assert.equal(body.expires_at, expires);
    assert.equal(body.status, 'active');
  });

  test('the created key authenticates with X-API-Key: 200, and last_used_at shows the use at once', async () => {
    const body = (await create(admin, { name: 'user', scopes: ['keys:read'] })).json() as KeyRecord & { key: string };
    const before = Date.now();
    const res = await ctx().inject({ method: 'GET', url: KEYS, headers: { 'x-api-key': body.key } });
    assert.equal(res.statusCode, 200);
    const seen = (await list(admin)).data.find((k) => k.id === body.id)!;
    assert.match(String(seen.last_used_at), ISO);
    assert.ok(Date.parse(String(seen.last_used_at)) >= before - 5);
  });

  test('list: newest first, limit and cursor pagination: 200 with next_cursor, then the last page with null', async () => {
    // A client of its own, so the listing holds exactly this test's keys.
    const token = await ctx().token(['keys:read', 'keys:write']);
    const ids: string[] = [];
    for (const name of ['one', 'two', 'three'])
      ids.push(((await create(token, { name, scopes: ['keys:read'] })).json() as KeyRecord).id);
    const first = await list(token, '?limit=2');
    assert.deepEqual(
      first.data.map((k) => k.id),
      [ids[2], ids[1]],
    );
    assert.equal(first.next_cursor, ids[1]);
    const second = await list(token, `?limit=2&cursor=${first.next_cursor}`);
    assert.deepEqual(
      second.data.map((k) => k.id),
      [ids[0]],
    );
    assert.equal(second.next_cursor, null);
    const all = await list(token);
    assert.deepEqual(
      all.data.map((k) => k.name),
      ['three', 'two', 'one'],
    );
    assert.equal(all.next_cursor, null);
    // Exactly a full page: no further cursor.
    assert.equal((await list(token, '?limit=3')).next_cursor, null);
  });

  test('list status filter: 200 with only keys in that state', async () => {
    const token = await ctx().token(['keys:read', 'keys:write']);
    const a = (await create(token, { name: 'a', scopes: ['keys:read'] })).json() as KeyRecord;
    const b = (await create(token, { name: 'b', scopes: ['keys:read'] })).json() as KeyRecord;
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: `${KEYS}/${a.id}`, headers: bearer(token) })).statusCode,
      200,
    );
    assert.deepEqual(
      (await list(token, '?status=inactive')).data.map((k) => k.id),
      [a.id],
    );
    assert.deepEqual(
      (await list(token, '?status=active')).data.map((k) => k.id),
      [b.id],
    );
    assert.deepEqual((await list(token, '?status=expired')).data, []);
  });

  test('list with a bad limit (0, 101, abc, 1.5, empty): 400 invalid_request naming limit', async () => {
    for (const limit of ['0', '101', 'abc', '1.5', '', '-1']) {
      const res = await ctx().inject({ method: 'GET', url: `${KEYS}?limit=${limit}`, headers: bearer(admin) });
      const body = problem(res, 400, 'invalid_request');
      assert.ok(
        (body.errors as { field: string }[]).some((e) => e.field === 'querystring.limit'),
        `limit=${limit}: ${res.body}`,
      );
    }
  });

  test('list with a bad cursor, status or unknown parameter: 400 invalid_request', async () => {
    for (const query of [
      'cursor=zzz',
      'cursor=key_01ARZ3NDEKTSV4RRFFQ69G5FAVX',
      `cursor=${encodeURIComponent("key_' or 1=1 --")}`,
      'status=deleted',
      'status=active&status=inactive',
      'owner=someone',
    ]) {
      problem(
        await ctx().inject({ method: 'GET', url: `${KEYS}?${query}`, headers: bearer(admin) }),
        400,
        'invalid_request',
      );
    }
    const body = problem(
      await ctx().inject({ method: 'GET', url: `${KEYS}?status=deleted`, headers: bearer(admin) }),
      400,
      'invalid_request',
    );
    assert.deepEqual(body.errors, [
      { field: 'querystring.status', message: 'must be one of: active, expired, inactive' },
    ]);
  });

  test('DELETE: 200 with the record now inactive; repeating it: 200 with the same record', async () => {
    const key = (await create(admin, { name: 'to delete', scopes: ['keys:read'] })).json() as KeyRecord;
    const first = await ctx().inject({ method: 'DELETE', url: `${KEYS}/${key.id}`, headers: bearer(admin) });
    assert.equal(first.statusCode, 200);
    const record = first.json() as KeyRecord;
    assert.deepEqual(Object.keys(record).sort(), RECORD_FIELDS);
    assert.equal(record.status, 'inactive');
    assert.match(String(record.deactivated_at), ISO);
    const second = await ctx().inject({ method: 'DELETE', url: `${KEYS}/${key.id}`, headers: bearer(admin) });
    assert.equal(second.statusCode, 200);
    assert.deepEqual(second.json(), record);
  });

  test('DELETE or rotate an unknown or malformed key id: 404 not_found', async () => {
    for (const id of [
      'key_01ARZ3NDEKTSV4RRFFQ69G5FAV',
      'nope',
      'key_%00',
      encodeURIComponent("' or 1=1 --"),
      'x'.repeat(90),
    ]) {
      problem(await ctx().inject({ method: 'DELETE', url: `${KEYS}/${id}`, headers: bearer(admin) }), 404, 'not_found');
      problem(
        await ctx().inject({ method: 'POST', url: `${KEYS}/${id}/rotate`, headers: bearer(admin), payload: {} }),
        404,
        'not_found',
      );
    }
  });

  test('DELETE with an id longer than the router accepts: 404 not_found', async () => {
    problem(
      await ctx().inject({ method: 'DELETE', url: `${KEYS}/${'k'.repeat(200)}`, headers: bearer(admin) }),
      404,
      'not_found',
    );
  });

  test('create with expires_at in the past or now: 400 validation_failed naming expires_at', async () => {
    for (const expires of [new Date(Date.now() - 1000).toISOString(), '2001-01-01T00:00:00Z']) {
      const body = problem(
        await create(admin, { name: 'old', scopes: ['keys:read'], expires_at: expires }),
        400,
        'validation_failed',
      );
      assert.deepEqual(body.errors, [{ field: 'expires_at', message: 'must be in the future' }]);
    }
    const bad = problem(
      await create(admin, { name: 'old', scopes: ['keys:read'], expires_at: 'tomorrow' }),
      400,
      'validation_failed',
    );
    assert.equal((bad.errors as { field: string }[])[0]!.field, 'expires_at');
  });

  test('create with a bad name, scopes, role or environment: 400 validation_failed listing each field', async () => {
    const cases: [object, string, string][] = [
      [{ scopes: ['keys:read'] }, 'name', 'is required'],
      [{ name: '', scopes: ['keys:read'] }, 'name', 'must not be empty'],
      [{ name: 'x'.repeat(101), scopes: ['keys:read'] }, 'name', 'must be at most 100 characters long'],
      [{ name: 'tab\there', scopes: ['keys:read'] }, 'name', 'must not contain control characters'],
      [{ name: 'nul\u0000', scopes: ['keys:read'] }, 'name', 'must not contain control characters'],
      [{ name: 'x' }, 'scopes', 'is required'],
      [{ name: 'x', scopes: [] }, 'scopes', 'must not be empty'],
      [{ name: 'x', scopes: ['keys:read', 'keys:read'] }, 'scopes', 'must not list the same item twice'],
      [{ name: 'x', scopes: ['root'] }, 'scopes.0', `must be one of: ${SCOPES.join(', ')}`],
      [{ name: 'x', scopes: ['keys:read'], role: 'owner' }, 'role', 'must be one of: service, operator, admin'],
      [{ name: 'x', scopes: ['keys:read'], environment: 'prod' }, 'environment', 'must be one of: live, test'],
      [{ name: 42, scopes: 'keys:read' }, 'name', 'must be a string'],
    ];
    for (const [payload, field, message] of cases) {
      const body = problem(await create(admin, payload), 400, 'validation_failed');
      assert.ok(
        (body.errors as { field: string; message: string }[]).some((e) => e.field === field && e.message === message),
        `${JSON.stringify(payload)}: ${JSON.stringify(body.errors)}`,
      );
    }
  });

  test('rotate: 201 with a new key of the same name, scopes, role and environment; old key expires after the grace period', async () => {
    const old = (
      await create(admin, {
        name: 'rotating',
        scopes: ['keys:read', 'trust:read'],
        role: 'operator',
        environment: 'test',
      })
    ).json() as KeyRecord & { key: string };
    const before = Date.now();
    const res = await ctx().inject({
      method: 'POST',
      url: `${KEYS}/${old.id}/rotate`,
      headers: bearer(admin),
      payload: { grace_period_seconds: 3600 },
    });
    assert.equal(res.statusCode, 201);
    const fresh = res.json() as KeyRecord & { key: string };
    assert.deepEqual(Object.keys(fresh).sort(), [...RECORD_FIELDS, 'key'].sort());
    assert.equal(res.headers.location, `${KEYS}/${fresh.id}`);
    assert.notEqual(fresh.id, old.id);
    assert.notEqual(fresh.key, old.key);
    for (const field of ['name', 'scopes', 'role', 'environment', 'owner_client_id'])
      assert.deepEqual(fresh[field], old[field], field);
    assert.equal(fresh.status, 'active');
    assert.equal(fresh.expires_at, null);
    assert.deepEqual(parseApiKey(fresh.key), { env: 'test' });
    const listed = (await list(admin)).data.find((k) => k.id === old.id)!;
    assert.equal(listed.status, 'active');
    const expiry = Date.parse(String(listed.expires_at));
    assert.ok(expiry >= before + 3_600_000 - 5 && expiry <= Date.now() + 3_600_000 + 5, String(listed.expires_at));
  });

  test('rotate without a body: 201 and the default grace of 86400 s', async () => {
    const old = (await create(admin, { name: 'default grace', scopes: ['keys:read'] })).json() as KeyRecord;
    const before = Date.now();
    const res = await ctx().inject({ method: 'POST', url: `${KEYS}/${old.id}/rotate`, headers: bearer(admin) });
    assert.equal(res.statusCode, 201);
    const expiry = Date.parse(String((await list(admin)).data.find((k) => k.id === old.id)!.expires_at));
    assert.ok(expiry >= before + 86_400_000 - 5 && expiry <= Date.now() + 86_400_000 + 5);
  });

  test('rotate with a bad grace period (-1, 604801, 1.5, "60", unknown field): 400 validation_failed', async () => {
    const old = (await create(admin, { name: 'bad grace', scopes: ['keys:read'] })).json() as KeyRecord;
    for (const payload of [
      { grace_period_seconds: -1 },
      { grace_period_seconds: 604801 },
      { grace_period_seconds: 1.5 },
      { grace_period_seconds: '60' },
      { grace: 1 },
    ]) {
      problem(
        await ctx().inject({ method: 'POST', url: `${KEYS}/${old.id}/rotate`, headers: bearer(admin), payload }),
        400,
        'validation_failed',
      );
    }
    // Nothing happened to the key.
    assert.equal((await list(admin)).data.find((k) => k.id === old.id)!.expires_at, null);
  });

  test('an old key keeps a shorter expiry it already had when rotated with a long grace: 201', async () => {
    const soon = new Date(Date.now() + 600_000).toISOString();
    const old = (await create(admin, { name: 'short', scopes: ['keys:read'], expires_at: soon })).json() as KeyRecord;
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: `${KEYS}/${old.id}/rotate`,
          headers: bearer(admin),
          payload: { grace_period_seconds: 604800 },
        })
      ).statusCode,
      201,
    );
    assert.equal((await list(admin)).data.find((k) => k.id === old.id)!.expires_at, soon);
  });
});
