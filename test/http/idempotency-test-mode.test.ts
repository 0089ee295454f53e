// Idempotency-Key in test mode (docs/api.md, "Integration"): keys are remembered per client AND environment, so
// the same key sent by a live and a test credential of one client names two requests: no replay,
// no 422 and no 409 across, in either direction, and neither changes what the other replays.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';

const ENVS = ['live', 'test'] as const;
type Env = (typeof ENVS)[number];
const other = (env: Env): Env => (env === 'live' ? 'test' : 'live');

describeEachBackend('Idempotency-Key in test mode', (ctx) => {
  const key: Record<Env, string> = { live: '', test: '' };
  const keyId: Record<Env, string> = { live: '', test: '' };
  let clientId: string;
  let liveToken: string;
  const post = (env: Env, url: string, idem: string, payload: object) =>
    ctx().inject({ method: 'POST', url, headers: { 'x-api-key': key[env], 'idempotency-key': idem }, payload });

  before(async () => {
    // One client holding a live and a test key: only the environment tells their requests apart.
    const client = await ctx().client(['keys:read', 'keys:write', 'trust:read'], 'operator');
    clientId = client.id;
    const res = await ctx().inject({
      method: 'POST',
      url: '/api/v1/auth/token',
      payload: { client_id: client.id, client_secret: client.secret },
    });
    liveToken = res.json().access_token as string;
    for (const env of ENVS) {
      const made = await ctx().inject({
        method: 'POST',
        url: '/api/v1/keys',
        headers: bearer(liveToken),
        payload: {
          name: `idem-${env}`,
          scopes: ['keys:read', 'keys:write', 'trust:read'],
          role: 'operator',
          environment: env,
        },
      });
      assert.equal(made.statusCode, 201, made.body);
      key[env] = made.json().key as string;
      keyId[env] = made.json().id as string;
    }
  });

  for (const env of ENVS) {
    test(`same key and body, ${env} first then ${other(env)}: two keys created, each in its own environment; each replays its own`, async () => {
      const idem = `cross-same-${env}`;
      const body = { name: `idem-same-${env}`, scopes: ['keys:read'] };
      const first = await post(env, '/api/v1/keys', idem, body);
      const second = await post(other(env), '/api/v1/keys', idem, body);
      for (const res of [first, second]) {
        assert.equal(res.statusCode, 201, res.body);
        assert.equal(res.headers['idempotent-replayed'], undefined);
      }
      assert.notEqual(first.json().id, second.json().id);
      assert.equal(first.json().environment, env);
      assert.equal(second.json().environment, other(env));
      for (const [e, original] of [
        [env, first],
        [other(env), second],
      ] as const) {
        const again = await post(e, '/api/v1/keys', idem, body);
        assert.equal(again.headers['idempotent-replayed'], 'true');
        assert.equal(again.json().id, original.json().id);
      }
      const rows = await ctx()
        .store.db.selectFrom('idempotency_keys')
        .select(['environment', 'client_id'])
        .where('idem_key', '=', idem)
        .orderBy('environment')
        .execute();
      assert.deepEqual(rows, [
        { environment: 'live', client_id: clientId },
        { environment: 'test', client_id: clientId },
      ]);
    });

    test(`a key used in ${env} with one body is free in ${other(env)} for another (no 422), and stays bound in ${env}`, async () => {
      const idem = `cross-reuse-${env}`;
      const entity = `idem-entity-${env}`;
      const first = await post(env, '/api/v1/trust/score', idem, { entity_id: entity, amount: 10, currency: 'USD' });
      assert.equal(first.statusCode, 200, first.body);
      const elsewhere = await post(other(env), '/api/v1/trust/score', idem, {
        entity_id: entity,
        amount: 99,
        currency: 'USD',
      });
      assert.equal(elsewhere.statusCode, 200, elsewhere.body);
      assert.equal(elsewhere.headers['idempotent-replayed'], undefined);
      assert.notEqual(elsewhere.json().decision_id, first.json().decision_id);
      problem(
        await post(env, '/api/v1/trust/score', idem, { entity_id: entity, amount: 99, currency: 'USD' }),
        422,
        'idempotency_key_reused',
      );
      const replay = await post(env, '/api/v1/trust/score', idem, { entity_id: entity, amount: 10, currency: 'USD' });
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.json().decision_id, first.json().decision_id);
    });

    test(`a request in flight in ${env} does not hold the same key in ${other(env)} (no 409)`, async () => {
      const idem = `cross-inflight-${env}`;
      const now = Date.now();
      await ctx()
        .store.db.insertInto('idempotency_keys')
        .values({
          environment: env,
          client_id: clientId,
          principal_id: keyId[env],
          idem_key: idem,
          fingerprint: 'x',
          state: 'pending',
          response: null,
          created_at: now,
          expires_at: now + 86_400_000,
        })
        .execute();
      const res = await post(other(env), '/api/v1/keys', idem, { name: `idem-inflight-${env}`, scopes: ['keys:read'] });
      assert.equal(res.statusCode, 201, res.body);
      // The pending claim is still there, untouched: only its own environment sees it.
      problem(
        await post(env, '/api/v1/keys', idem, { name: `idem-inflight-${env}`, scopes: ['keys:read'] }),
        422,
        'idempotency_key_reused',
      );
    });
  }

  test('a live token and a test key of one client: the same key is two requests', async () => {
    const idem = 'cross-token';
    const body = { name: 'idem-token', scopes: ['keys:read'] };
    const live = await ctx().inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: { ...bearer(liveToken), 'idempotency-key': idem },
      payload: body,
    });
    const sandbox = await post('test', '/api/v1/keys', idem, body);
    assert.equal(live.statusCode, 201);
    assert.equal(sandbox.statusCode, 201);
    assert.equal(sandbox.headers['idempotent-replayed'], undefined);
    assert.equal(live.json().environment, 'live');
    assert.equal(sandbox.json().environment, 'test');
  });

  test('a test-mode stored response cannot be moved to the live partition: it is not replayed there', async () => {
    const idem = 'cross-moved';
    const body = { name: 'idem-moved', scopes: ['keys:read'] };
    assert.equal((await post('test', '/api/v1/keys', idem, body)).statusCode, 201);
    await ctx()
      .store.db.updateTable('idempotency_keys')
      .set({ environment: 'live', principal_id: keyId.live })
      .where('environment', '=', 'test')
      .where('idem_key', '=', idem)
      .execute();
    // Sealed for the test partition and its principal: refused rather than shown to a live caller.
    problem(await post('live', '/api/v1/keys', idem, body), 409, 'conflict');
  });
});
