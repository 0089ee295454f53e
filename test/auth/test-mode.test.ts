// Test-mode clients (docs/api.md, "Integration"): a test client's token carries the signed claim
// `environment: "test"`, and its requests read and write only test data. The claim cannot be
// edited (the signature covers it), a value other than live/test is refused, and a token of ours
// without the claim (issued before test mode) is live.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { describeEachBackend, bearer, problem, ADMIN_ID } from '../helpers/app.ts';
import { createClient } from '../../src/auth/clients.ts';
import { SCOPES } from '../../src/lib/principal.ts';
import { event, hash, postEvents } from '../helpers/trust.ts';
import { currentSigningKey, signToken, tamper } from './support.ts';

const ENVS = ['live', 'test'] as const;
type Env = (typeof ENVS)[number];
const other = (env: Env): Env => (env === 'live' ? 'test' : 'live');

describeEachBackend('Test-mode clients and tokens', (ctx) => {
  const token: Record<Env, string> = { live: '', test: '' };
  const createKey = (headers: Record<string, string>) =>
    ctx().inject({ method: 'POST', url: '/api/v1/keys', headers, payload: { name: 'auth-tm', scopes: ['keys:read'] } });

  before(async () => {
    for (const env of ENVS) {
      // Admins: the role that sees every client's data still sees one environment only.
      const { client, secret } = await createClient(ctx().store.db, {
        name: `auth-${env}`,
        role: 'admin',
        scopes: [...SCOPES],
        environment: env,
      });
      const res = await ctx().inject({
        method: 'POST',
        url: '/api/v1/auth/token',
        payload: { client_id: client.client_id, client_secret: secret },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().environment, env, 'the token response says which data the token sees');
      token[env] = res.json().access_token as string;
    }
  });

  test("a client's token carries its environment as a claim; requests with it act in that environment", async () => {
    for (const env of ENVS) {
      assert.equal(decodeJwt(token[env]).environment, env);
      const res = await createKey(bearer(token[env]));
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().environment, env);
    }
  });

  for (const env of ENVS) {
    test(`a ${env} token whose environment claim is edited to ${other(env)}, or removed: 401 invalid_token`, async () => {
      const edits = [
        (c: Record<string, unknown>) => (c.environment = other(env)),
        (c: Record<string, unknown>) => delete c.environment,
      ];
      for (const edit of edits) {
        const res = await createKey(bearer(tamper(token[env], edit)));
        problem(res, 401, 'unauthenticated');
        assert.match(String(res.headers['www-authenticate']), /error="invalid_token"/);
      }
    });
  }

  test('a token signed by the service without the claim is live; with a claim other than live or test it is refused', async () => {
    const { kid, key } = await currentSigningKey(ctx().store, ctx().config);
    const legacy = await signToken(key, kid, {
      claims: { sub: ADMIN_ID, client_id: ADMIN_ID, scope: 'keys:read keys:write', role: 'admin' },
    });
    assert.equal(decodeJwt(legacy).environment, undefined);
    const res = await createKey(bearer(legacy));
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().environment, 'live');
    for (const environment of ['prod', 'TEST', '', true, null, ['test']]) {
      const odd = await signToken(key, kid, { claims: { environment } as never });
      problem(await createKey(bearer(odd)), 401, 'unauthenticated');
    }
  });

  for (const env of ENVS) {
    test(`a webhook created with a ${env} client's token is 404 to a ${other(env)} admin token and absent from its list`, async () => {
      const made = await ctx().inject({
        method: 'POST',
        url: '/api/v1/webhooks',
        headers: bearer(token[env]),
        payload: { url: 'https://93.184.216.34/hooks', events: ['decision.high_risk'] },
      });
      assert.equal(made.statusCode, 201, made.body);
      assert.equal(made.json().environment, env);
      problem(
        await ctx().inject({
          method: 'GET',
          url: `/api/v1/webhooks/${made.json().id}`,
          headers: bearer(token[other(env)]),
        }),
        404,
        'not_found',
      );
      const list = await ctx().inject({ method: 'GET', url: '/api/v1/webhooks', headers: bearer(token[other(env)]) });
      assert.ok(!(list.json().data as Array<{ id: string }>).some((w) => w.id === made.json().id));
      assert.equal(
        (await ctx().inject({ method: 'GET', url: `/api/v1/webhooks/${made.json().id}`, headers: bearer(token[env]) }))
          .statusCode,
        200,
      );
    });
  }

  // Depends on the trust routes reading by environment (trust helper, merged separately).
  for (const env of ENVS) {
    test(`events written with a ${env} client's token are invisible to the ${other(env)} environment's GET /trust/entities/{id}`, async () => {
      const entity = hash(`auth-tm-entity-${env}-${ctx().backend}`);
      await postEvents(ctx(), token[env], [
        event('trade.completed', entity, { amount: 50, currency: 'USD' }),
        event('chargeback', entity),
      ]);
      const own = await ctx().inject({
        method: 'GET',
        url: `/api/v1/trust/entities/${entity}`,
        headers: bearer(token[env]),
      });
      assert.equal(own.statusCode, 200, own.body);
      assert.equal(own.json().chargebacks, 1);
      problem(
        await ctx().inject({
          method: 'GET',
          url: `/api/v1/trust/entities/${entity}`,
          headers: bearer(token[other(env)]),
        }),
        404,
        'not_found',
      );
      // The same entity id written in the other environment starts from nothing there.
      await postEvents(ctx(), token[other(env)], [event('trade.completed', entity, { amount: 50, currency: 'USD' })]);
      const theirs = await ctx().inject({
        method: 'GET',
        url: `/api/v1/trust/entities/${entity}`,
        headers: bearer(token[other(env)]),
      });
      assert.equal(theirs.json().chargebacks, 0);
      assert.equal(theirs.json().trades_completed, 1);
      assert.equal(
        (
          await ctx().inject({ method: 'GET', url: `/api/v1/trust/entities/${entity}`, headers: bearer(token[env]) })
        ).json().trades_completed,
        1,
      );
    });
  }
});
