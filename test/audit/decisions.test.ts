// GET /api/v1/decisions/{id}: who may read a stored decision. Non-admins see their own client's
// decisions only; anything else is 404 (existence is not revealed); an admin sees every one.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem, type TestContext } from '../helpers/app.ts';
import { hash, score } from '../helpers/trust.ts';
import type { Role } from '../../src/lib/principal.ts';

const decision = (ctx: TestContext, headers: Record<string, string>, id: string) =>
  ctx.inject({ method: 'GET', url: `/api/v1/decisions/${id}`, headers });

async function login(ctx: TestContext, scopes: string[], role: Role = 'service') {
  const c = await ctx.client(scopes, role);
  const res = await ctx.inject({
    method: 'POST',
    url: '/api/v1/auth/token',
    payload: { client_id: c.id, client_secret: c.secret },
  });
  assert.equal(res.statusCode, 200, res.body);
  return { id: c.id, token: res.json().access_token as string };
}

describeEachBackend('audit decisions access', (ctx) => {
  let owner: { id: string; token: string };
  let scoreId = '';
  let analysisId = '';

  before(async () => {
    owner = await login(ctx(), ['trust:read', 'dispute:analyze', 'audit:read', 'keys:write']);
    const scored = await score(ctx(), owner.token, {
      entity_id: hash('audit-subject'),
      amount: 10,
      currency: 'EUR',
      context: { trade_id: 'trd-9', payment_method: 'card', counterparty_id: hash('audit-cp') },
    });
    assert.equal(scored.statusCode, 200, scored.body);
    scoreId = scored.json().decision_id;
    const analysed = await ctx().inject({
      method: 'POST',
      url: '/api/v1/dispute/analyze',
      headers: bearer(owner.token),
      payload: {
        dispute_id: 'dsp-audit',
        trade: { trade_id: 't', amount: 10, currency: 'EUR' },
        buyer_id: hash('ab'),
        seller_id: hash('as'),
        opened_by: 'buyer',
        reason: 'other',
        evidence: { payment_proof_submitted: true },
      },
    });
    assert.equal(analysed.statusCode, 200, analysed.body);
    analysisId = analysed.json().analysis_id;
  });

  test('the owning client reads its own score and analysis: 200', async () => {
    const s = await decision(ctx(), bearer(owner.token), scoreId);
    assert.equal(s.statusCode, 200, s.body);
    assert.equal(s.json().kind, 'score');
    assert.equal(s.json().principal_id, owner.id);
    const a = await decision(ctx(), bearer(owner.token), analysisId);
    assert.equal(a.statusCode, 200, a.body);
    assert.equal(a.json().kind, 'dispute_analysis');
    assert.equal(a.json().subject_id, 'dsp-audit');
  });

  test("a decision shows what was asked, without entity ids: amount, currency and trade context; a dispute's trade, reason, opener and evidence", async () => {
    const s = (await decision(ctx(), bearer(owner.token), scoreId)).json();
    assert.deepEqual(s.request, { amount: 10, currency: 'EUR', payment_method: 'card', trade_id: 'trd-9' });
    const a = (await decision(ctx(), bearer(owner.token), analysisId)).json();
    assert.deepEqual(a.request.trade, { trade_id: 't', amount: 10, currency: 'EUR' });
    assert.equal(a.request.reason, 'other');
    assert.equal(a.request.opened_by, 'buyer');
    assert.deepEqual(a.request.evidence, { payment_proof_submitted: true });
    assert.ok(!JSON.stringify([s.request, a.request]).includes(hash('ab')));
  });

  test("a non-admin client cannot read another client's decision: 404 not_found, same as an unknown id", async () => {
    for (const role of ['service', 'operator'] as const) {
      const other = await login(ctx(), ['audit:read', 'trust:read'], role);
      for (const id of [scoreId, analysisId]) {
        const body = problem(await decision(ctx(), bearer(other.token), id), 404, 'not_found');
        const unknown = problem(
          await decision(ctx(), bearer(other.token), `${id.slice(0, -1)}${id.endsWith('0') ? '1' : '0'}`),
          404,
          'not_found',
        );
        assert.equal(body.detail, unknown.detail, 'a foreign decision looks exactly like a missing one');
      }
    }
  });

  test("an admin reads any client's decision: 200", async () => {
    const bootstrap = await ctx().token();
    const created = await login(ctx(), ['audit:read'], 'admin');
    for (const token of [bootstrap, created.token]) {
      for (const [id, kind] of [
        [scoreId, 'score'],
        [analysisId, 'dispute_analysis'],
      ] as const) {
        const res = await decision(ctx(), bearer(token), id);
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().kind, kind);
        assert.equal(res.json().principal_id, owner.id);
      }
    }
  });

  test("an API key's decisions belong to the client that owns the key: 200 for it, 404 for others", async () => {
    const created = await ctx().inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: bearer(owner.token),
      payload: { name: 'audit-key', scopes: ['trust:read', 'audit:read'] },
    });
    assert.equal(created.statusCode, 201, created.body);
    const { key, id: keyId } = created.json();
    const scored = await ctx().inject({
      method: 'POST',
      url: '/api/v1/trust/score',
      headers: { 'x-api-key': key },
      payload: { entity_id: hash('key-subject'), amount: 5, currency: 'USD' },
    });
    assert.equal(scored.statusCode, 200, scored.body);
    const id = scored.json().decision_id;
    for (const headers of [{ 'x-api-key': key }, bearer(owner.token)]) {
      const res = await decision(ctx(), headers, id);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().principal_id, keyId);
    }
    // and the key reads the decisions of its owning client made with a token
    assert.equal((await decision(ctx(), { 'x-api-key': key }, scoreId)).statusCode, 200);
    const stranger = await login(ctx(), ['audit:read']);
    problem(await decision(ctx(), bearer(stranger.token), id), 404, 'not_found');
  });

  test('reading decisions requires audit:read (403) and credentials (401); an over-long id: 400', async () => {
    const noAudit = await login(ctx(), ['trust:read', 'dispute:analyze']);
    problem(await decision(ctx(), bearer(noAudit.token), scoreId), 403, 'insufficient_scope');
    problem(await decision(ctx(), {}, scoreId), 401, 'unauthenticated');
    problem(await decision(ctx(), bearer(owner.token), `dec_${'A'.repeat(80)}`), 400, 'invalid_request');
  });
});
