// API keys in test mode (docs/api.md, "API keys", §10). A new key defaults to its creator's environment; a
// test-mode principal (vch_test_ key or test client token) can never create, rotate or deactivate
// a live key (403 insufficient_scope: like a higher role, it would reach beyond the creator). Keys
// are credentials, not partitioned data: listings show both environments, each record naming its
// own, and `?environment=` narrows them.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';
import { createClient } from '../../src/auth/clients.ts';
import { parseApiKey } from '../../src/keys/format.ts';

const KEYS = '/api/v1/keys';
const SCOPES = ['keys:read', 'keys:write', 'trust:read'];

type Made = { id: string; key: string; environment: string; status: string };

describeEachBackend('API keys in test mode', (ctx) => {
  let liveToken: string;
  let testToken: string;
  /** a test client with role admin: it sees every client's keys, so only the environment rule stops it */
  let testAdminToken: string;
  let liveKey: Made;
  let testKey: Made;
  const create = async (headers: Record<string, string>, payload: object) =>
    ctx().inject({ method: 'POST', url: KEYS, headers, payload });
  const made = async (headers: Record<string, string>, payload: object): Promise<Made> => {
    const res = await create(headers, payload);
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as Made;
  };
  const apiKey = (k: Made) => ({ 'x-api-key': k.key });
  const status = async (id: string) =>
    (await ctx().inject({ method: 'GET', url: `${KEYS}/${id}`, headers: bearer(liveToken) })).json().status as string;
  const tokenOf = async (environment: 'live' | 'test', role: 'operator' | 'admin' = 'operator') => {
    const { client, secret } = await createClient(ctx().store.db, {
      name: `keys-${environment}`,
      role,
      scopes: SCOPES,
      environment,
    });
    const res = await ctx().inject({
      method: 'POST',
      url: '/api/v1/auth/token',
      payload: { client_id: client.client_id, client_secret: secret },
    });
    return res.json().access_token as string;
  };

  before(async () => {
    liveToken = await tokenOf('live');
    testToken = await tokenOf('test');
    testAdminToken = await tokenOf('test', 'admin');
    liveKey = await made(bearer(liveToken), { name: 'km-live', scopes: SCOPES, role: 'operator' });
    testKey = await made(bearer(liveToken), { name: 'km-test', scopes: SCOPES, role: 'operator', environment: 'test' });
  });

  test("without environment, a new key takes its creator's: a test key's and a test token's are vch_test_, a live key's and token's vch_live_", async () => {
    const cases = [
      [apiKey(testKey), 'test'],
      [bearer(testToken), 'test'],
      [apiKey(liveKey), 'live'],
      [bearer(liveToken), 'live'],
    ] as const;
    for (const [headers, environment] of cases) {
      const key = await made(headers, { name: `km-default-${environment}`, scopes: ['trust:read'] });
      assert.equal(key.environment, environment);
      assert.equal(parseApiKey(key.key)?.env, environment);
    }
  });

  test('a test principal asking for a live key: 403 insufficient_scope, nothing created; a test key it may ask for', async () => {
    for (const headers of [apiKey(testKey), bearer(testToken)]) {
      const res = await create(headers, { name: 'km-escalate', scopes: ['trust:read'], environment: 'live' });
      const body = problem(res, 403, 'insufficient_scope');
      assert.match(String(body.detail), /test-mode credential/);
      assert.equal(
        (await made(headers, { name: 'km-explicit-test', scopes: ['trust:read'], environment: 'test' })).environment,
        'test',
      );
    }
    const rows = await ctx().store.db.selectFrom('api_keys').select('id').where('name', '=', 'km-escalate').execute();
    assert.equal(rows.length, 0);
  });

  test('a live principal may create a test key (how test mode starts)', async () => {
    for (const headers of [apiKey(liveKey), bearer(liveToken)]) {
      const key = await made(headers, { name: 'km-live-makes-test', scopes: ['trust:read'], environment: 'test' });
      assert.equal(key.environment, 'test');
      assert.match(key.key, /^vch_test_/);
    }
  });

  test('a test principal rotating a live key: 403, the live key neither expires nor gains a successor; rotating a test key: a test successor', async () => {
    const victim = await made(bearer(liveToken), { name: 'km-rotate-live', scopes: ['trust:read'] });
    for (const headers of [apiKey(testKey), bearer(testAdminToken)]) {
      assert.match(
        String(
          problem(
            await ctx().inject({ method: 'POST', url: `${KEYS}/${victim.id}/rotate`, headers, payload: {} }),
            403,
            'insufficient_scope',
          ).detail,
        ),
        /test-mode credential/,
      );
    }
    const row = await ctx()
      .store.db.selectFrom('api_keys')
      .selectAll()
      .where('id', '=', victim.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.rotated_at, null);
    assert.equal(row.expires_at, null);
    const mine = await made(apiKey(testKey), { name: 'km-rotate-test', scopes: ['trust:read'] });
    const rotated = await ctx().inject({
      method: 'POST',
      url: `${KEYS}/${mine.id}/rotate`,
      headers: apiKey(testKey),
      payload: {},
    });
    assert.equal(rotated.statusCode, 201, rotated.body);
    assert.equal(rotated.json().environment, 'test');
    assert.match(rotated.json().key, /^vch_test_/);
  });

  test('a test principal deactivating a live key: 403 and the key keeps working; a live principal deactivating a test key: 200', async () => {
    const victim = await made(bearer(liveToken), { name: 'km-deactivate-live', scopes: ['keys:read'] });
    for (const headers of [apiKey(testKey), bearer(testAdminToken)]) {
      assert.match(
        String(
          problem(
            await ctx().inject({ method: 'DELETE', url: `${KEYS}/${victim.id}`, headers }),
            403,
            'insufficient_scope',
          ).detail,
        ),
        /test-mode credential/,
      );
    }
    assert.equal(await status(victim.id), 'active');
    assert.equal((await ctx().inject({ method: 'GET', url: KEYS, headers: apiKey(victim) })).statusCode, 200);
    const sandbox = await made(bearer(liveToken), {
      name: 'km-deactivate-test',
      scopes: ['keys:read'],
      environment: 'test',
    });
    const res = await ctx().inject({ method: 'DELETE', url: `${KEYS}/${sandbox.id}`, headers: apiKey(liveKey) });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().status, 'inactive');
    problem(await ctx().inject({ method: 'GET', url: KEYS, headers: apiKey(sandbox) }), 401, 'unauthenticated');
  });

  test("listing is not partitioned: a test key sees its client's keys of both environments, each naming its own; ?environment= narrows", async () => {
    const list = async (headers: Record<string, string>, query = '') => {
      const res = await ctx().inject({ method: 'GET', url: `${KEYS}${query}`, headers });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data as Made[];
    };
    for (const headers of [apiKey(testKey), apiKey(liveKey)]) {
      const all = await list(headers, '?limit=100');
      const ids = all.map((k) => k.id);
      assert.ok(ids.includes(liveKey.id) && ids.includes(testKey.id));
      assert.deepEqual(new Set(all.map((k) => k.environment)), new Set(['live', 'test']));
      for (const environment of ['live', 'test']) {
        const only = await list(headers, `?limit=100&environment=${environment}`);
        assert.ok(only.length > 0);
        assert.ok(only.every((k) => k.environment === environment));
        assert.equal(only.length, all.filter((k) => k.environment === environment).length);
      }
    }
    problem(
      await ctx().inject({ method: 'GET', url: `${KEYS}?environment=prod`, headers: apiKey(testKey) }),
      400,
      'invalid_request',
    );
    // GET of one key is not partitioned either.
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `${KEYS}/${liveKey.id}`, headers: apiKey(testKey) })).json()
        .environment,
      'live',
    );
  });
});
