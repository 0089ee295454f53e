// Idempotent replays and authorisation (docs/api.md, "Idempotency"): the route's scope and role are
// checked before any replay, and a stored response replays only to the principal (client and
// credential) that made the request. Regression tests for a replay that handed a service key the
// secret of an admin key, or of a webhook, created by another credential of the same client.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';

describeEachBackend(
  'Idempotency-Key is bound to the principal',
  (ctx) => {
    let adminToken: string;
    let serviceKey: string;
    let otherServiceKey: string;
    let operatorToken: string;
    let serviceWebhookKey: string;

    const post = (headers: Record<string, string>, url: string, idem: string, payload: object) =>
      ctx().inject({ method: 'POST', url, headers: { ...headers, 'idempotency-key': idem }, payload });
    const makeKey = async (token: string, role: string, scopes: string[]) => {
      const res = await ctx().inject({
        method: 'POST',
        url: '/api/v1/keys',
        headers: bearer(token),
        payload: { name: `k-${role}`, role, scopes },
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().key as string;
    };

    before(async () => {
      // The bootstrap admin client: its token, and service-role keys of the same client.
      adminToken = await ctx().token();
      serviceKey = await makeKey(adminToken, 'service', ['keys:read', 'keys:write']);
      otherServiceKey = await makeKey(adminToken, 'service', ['keys:read', 'keys:write']);
      const operator = await ctx().client(['webhooks:read', 'webhooks:write', 'keys:read', 'keys:write'], 'operator');
      const res = await ctx().inject({
        method: 'POST',
        url: '/api/v1/auth/token',
        payload: { client_id: operator.id, client_secret: operator.secret },
      });
      operatorToken = res.json().access_token as string;
      serviceWebhookKey = await makeKey(operatorToken, 'service', ['webhooks:read', 'webhooks:write']);
    });

    test("a service key replaying an admin's key creation gets no secret: its own request is refused (403)", async () => {
      const body = { name: 'new-admin-key', role: 'admin', scopes: ['keys:read'] };
      const first = await post(bearer(adminToken), '/api/v1/keys', 'steal-1', body);
      assert.equal(first.statusCode, 201, first.body);
      const secret = first.json().key as string;
      const stolen = await post({ 'x-api-key': serviceKey }, '/api/v1/keys', 'steal-1', body);
      problem(stolen, 403, 'insufficient_scope');
      assert.equal(stolen.headers['idempotent-replayed'], undefined);
      assert.ok(!stolen.body.includes(secret));
      // The admin's own retry still replays its response.
      const again = await post(bearer(adminToken), '/api/v1/keys', 'steal-1', body);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.json().key, secret);
    });

    test("a service key with webhooks:write gets 403 naming the scope, never the operator's whsec_ secret", async () => {
      const body = { url: 'http://127.0.0.1:9/vouch', events: ['entity.flagged'] };
      const first = await post(bearer(operatorToken), '/api/v1/webhooks', 'steal-2', body);
      assert.equal(first.statusCode, 201, first.body);
      const stolen = await post({ 'x-api-key': serviceWebhookKey }, '/api/v1/webhooks', 'steal-2', body);
      problem(stolen, 403, 'insufficient_scope');
      assert.equal(stolen.headers['idempotent-replayed'], undefined);
      assert.match(String(stolen.headers['www-authenticate']), /error="insufficient_scope", scope="webhooks:write"/);
      assert.ok(!stolen.body.includes('whsec_'));
    });

    test('a weaker principal cannot poison a key: its stored refusal never replays to the admin', async () => {
      const body = { name: 'poisoned', role: 'admin', scopes: ['keys:read'] };
      problem(await post({ 'x-api-key': serviceKey }, '/api/v1/keys', 'poison-1', body), 403, 'insufficient_scope');
      const admin = await post(bearer(adminToken), '/api/v1/keys', 'poison-1', body);
      assert.equal(admin.statusCode, 201, admin.body);
      assert.equal(admin.headers['idempotent-replayed'], undefined);
    });

    test('two keys of one client with the same Idempotency-Key make two requests, each replaying its own', async () => {
      const body = { name: 'twin', scopes: ['keys:read'] };
      const a = await post({ 'x-api-key': serviceKey }, '/api/v1/keys', 'twin-1', body);
      const b = await post({ 'x-api-key': otherServiceKey }, '/api/v1/keys', 'twin-1', body);
      assert.equal(a.statusCode, 201);
      assert.equal(b.statusCode, 201);
      assert.equal(b.headers['idempotent-replayed'], undefined);
      assert.notEqual(a.json().id, b.json().id);
      const againA = await post({ 'x-api-key': serviceKey }, '/api/v1/keys', 'twin-1', body);
      assert.equal(againA.headers['idempotent-replayed'], 'true');
      assert.equal(againA.json().id, a.json().id);
    });

    test('a role refusal runs before the idempotency claim: nothing is stored for it', async () => {
      const body = { url: 'http://127.0.0.1:9/other', events: ['entity.flagged'] };
      problem(
        await post({ 'x-api-key': serviceWebhookKey }, '/api/v1/webhooks', 'unclaimed-1', body),
        403,
        'insufficient_scope',
      );
      const rows = await ctx()
        .store.db.selectFrom('idempotency_keys')
        .select('idem_key')
        .where('idem_key', '=', 'unclaimed-1')
        .execute();
      assert.equal(rows.length, 0);
    });

    test('a body nested too deeply for the fingerprint is a 400, not a 500', async () => {
      const deep = `${'['.repeat(20_000)}1${']'.repeat(20_000)}`;
      const res = await ctx().inject({
        // A policy document is validated by the handler, so the fingerprint is the first to walk it.
        method: 'POST',
        url: '/api/v1/policies',
        headers: { ...bearer(adminToken), 'idempotency-key': 'deep-1', 'content-type': 'application/json' },
        payload: `{"version":"deep","x":${deep}}`,
      });
      problem(res, 400, 'invalid_request');
    });
  },
  { webhookAllowPrivate: true },
);
