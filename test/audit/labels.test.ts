// docs/api.md, "Outcomes and labels": stored feature vectors, labels from the API and from outcome events (an API label
// is never overwritten by an event), and the filtered, paginated decision list.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describeEachBackend, bearer, problem, type TestContext } from '../helpers/app.ts';
import { hash, score, postEvents, event, tradeHistory } from '../helpers/trust.ts';
import { bodies, JSON_TYPE, wellBehaved } from '../helpers/fuzz.ts';
import { SIGNAL_NAMES } from '../../src/model/policy.ts';
import type { Role } from '../../src/lib/principal.ts';

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

const label = (ctx: TestContext, token: string, id: string, payload: unknown) =>
  ctx.inject({
    method: 'POST',
    url: `/api/v1/decisions/${id}/label`,
    headers: bearer(token),
    payload: payload as Record<string, unknown>,
  });
const get = (ctx: TestContext, token: string, id: string) =>
  ctx.inject({ method: 'GET', url: `/api/v1/decisions/${id}`, headers: bearer(token) });
const list = (ctx: TestContext, token: string, query: string) =>
  ctx.inject({ method: 'GET', url: `/api/v1/decisions?${query}`, headers: bearer(token) });

describeEachBackend('decision labels and list', (ctx) => {
  let owner: { id: string; token: string };
  let other: { id: string; token: string };
  let adminTokenValue = '';
  let analysisId = '';
  const entity = hash('label-subject');

  before(async () => {
    owner = await login(ctx(), ['trust:read', 'trust:write', 'dispute:analyze', 'audit:read', 'labels:write']);
    other = await login(ctx(), ['trust:read', 'audit:read', 'labels:write']);
    adminTokenValue = await ctx().token();
    await postEvents(ctx(), owner.token, tradeHistory(entity, 5, 30));
    const analysed = await ctx().inject({
      method: 'POST',
      url: '/api/v1/dispute/analyze',
      headers: bearer(owner.token),
      payload: {
        dispute_id: 'dsp-label',
        trade: { trade_id: 't', amount: 10, currency: 'EUR' },
        buyer_id: hash('lb'),
        seller_id: hash('ls'),
        opened_by: 'buyer',
        reason: 'other',
      },
    });
    assert.equal(analysed.statusCode, 200, analysed.body);
    analysisId = analysed.json().analysis_id;
  });

  const adminToken = async () => adminTokenValue;
  async function scored(tradeId?: string, who = owner, entityId = entity): Promise<string> {
    const res = await score(ctx(), who.token, {
      entity_id: entityId,
      amount: 100 + Math.random(),
      currency: 'USD',
      context: tradeId ? { trade_id: tradeId, payment_method: 'card' } : {},
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().decision_id as string;
  }

  test('a score decision stores every signal value (zeros included), its trade_id, and label null: GET 200', async () => {
    const id = await scored('trade-features');
    const res = await get(ctx(), owner.token, id);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.deepEqual(Object.keys(body.features).sort(), [...SIGNAL_NAMES].sort());
    assert.ok(
      Object.values(body.features).some((v) => v === 0),
      'zero values are kept',
    );
    assert.equal(body.trade_id, 'trade-features');
    assert.equal(body.label, null);
    // Every returned signal's value is the stored feature's value.
    for (const s of body.result.signals as { name: string; value: number }[])
      assert.equal(body.features[s.name], s.value);
  });

  test('POST label: 200 {decision_id, label, source api, labelled_at, labelled_by}; relabelling replaces it', async () => {
    const id = await scored('trade-api');
    const first = await label(ctx(), owner.token, id, { label: 'fraud', note: 'confirmed by the bank' });
    assert.equal(first.statusCode, 200, first.body);
    const body = first.json();
    assert.equal(body.decision_id, id);
    assert.equal(body.label, 'fraud');
    assert.equal(body.source, 'api');
    assert.equal(body.labelled_by, owner.id);
    assert.ok(!Number.isNaN(Date.parse(body.labelled_at)));
    const again = await label(ctx(), owner.token, id, { label: 'legit' });
    assert.equal(again.statusCode, 200, again.body);
    const shown = (await get(ctx(), owner.token, id)).json();
    assert.equal(shown.label.label, 'legit');
    assert.equal(shown.label.source, 'api');
  });

  test("labelling another client's or an unknown decision: 404; an admin may label any", async () => {
    const id = await scored('trade-other');
    problem(await label(ctx(), other.token, id, { label: 'fraud' }), 404, 'not_found');
    problem(await label(ctx(), owner.token, 'dec_01ARZ3NDEKTSV4RRFFQ69G5FAV', { label: 'fraud' }), 404, 'not_found');
    const byAdmin = await label(ctx(), adminTokenValue, id, { label: 'fraud' });
    assert.equal(byAdmin.statusCode, 200, byAdmin.body);
  });

  test('a dispute analysis cannot be labelled: 409 conflict', async () => {
    problem(await label(ctx(), owner.token, analysisId, { label: 'fraud' }), 409, 'conflict');
  });

  test('bad label bodies: 400 validation_failed; no credentials 401; without labels:write 403', async () => {
    const id = await scored();
    for (const payload of [
      {},
      { label: 'maybe' },
      { label: 'fraud', note: 'x'.repeat(501) },
      { label: 'fraud', extra: 1 },
    ]) {
      problem(await label(ctx(), owner.token, id, payload), 400, 'validation_failed');
    }
    problem(
      await ctx().inject({ method: 'POST', url: `/api/v1/decisions/${id}/label`, payload: { label: 'fraud' } }),
      401,
      'unauthenticated',
    );
    const reader = await login(ctx(), ['audit:read']);
    problem(await label(ctx(), reader.token, id, { label: 'fraud' }), 403, 'insufficient_scope');
  });

  test('an outcome event with the trade_id labels every decision of that trade fraud (source event), never one labelled through the API', async () => {
    const [a, b, c, unrelated] = [
      await scored('trade-ev'),
      await scored('trade-ev'),
      await scored('trade-ev'),
      await scored('trade-ev-other'),
    ];
    assert.equal((await label(ctx(), owner.token, c, { label: 'legit' })).statusCode, 200);
    await postEvents(ctx(), owner.token, [
      event('chargeback', entity, { trade_id: 'trade-ev', amount: 10, currency: 'USD' }, 1000),
    ]);
    for (const id of [a, b]) {
      const l = (await get(ctx(), owner.token, id)).json().label;
      assert.equal(l.label, 'fraud');
      assert.equal(l.source, 'event');
    }
    const kept = (await get(ctx(), owner.token, c)).json().label;
    assert.deepEqual([kept.label, kept.source], ['legit', 'api']);
    assert.equal((await get(ctx(), owner.token, unrelated)).json().label, null);
  });

  test('a lost dispute and a fraud report with a trade_id label fraud; a won dispute and an event without trade_id do not', async () => {
    const lost = await scored('trade-lost');
    const reported = await scored('trade-reported');
    const won = await scored('trade-won');
    const noTrade = await scored('trade-none');
    await postEvents(ctx(), owner.token, [
      event('dispute.resolved', entity, { trade_id: 'trade-lost', resolution: 'against' }, 1000),
      event('fraud.reported', entity, { trade_id: 'trade-reported' }, 1000),
      event('dispute.resolved', entity, { trade_id: 'trade-won', resolution: 'in_favor' }, 1000),
      event('chargeback', entity, { amount: 5, currency: 'USD' }, 1000),
    ]);
    assert.equal((await get(ctx(), owner.token, lost)).json().label?.label, 'fraud');
    assert.equal((await get(ctx(), owner.token, reported)).json().label?.label, 'fraud');
    assert.equal((await get(ctx(), owner.token, won)).json().label, null);
    assert.equal((await get(ctx(), owner.token, noTrade)).json().label, null);
    // An API label given after the event replaces it.
    assert.equal((await label(ctx(), owner.token, lost, { label: 'legit' })).statusCode, 200);
    assert.equal((await get(ctx(), owner.token, lost)).json().label.source, 'api');
  });

  test('GET /decisions: newest first, filters by kind, entity, risk level and label, pages with next_cursor; only own client', async () => {
    const mine = hash('list-subject');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await scored(`list-${i}`, owner, mine));
    await scored('list-x', other, mine);
    assert.equal((await label(ctx(), owner.token, ids[1]!, { label: 'fraud' })).statusCode, 200);
    const all = await list(ctx(), owner.token, `entity_id=${mine}`);
    assert.equal(all.statusCode, 200, all.body);
    assert.deepEqual(
      all.json().data.map((d: { id: string }) => d.id),
      [...ids].reverse(),
    );
    assert.equal(all.json().next_cursor, null);
    const fraud = (await list(ctx(), owner.token, `entity_id=${mine}&label=fraud`)).json().data;
    assert.deepEqual(
      fraud.map((d: { id: string }) => d.id),
      [ids[1]],
    );
    assert.equal((await list(ctx(), owner.token, `entity_id=${mine}&label=none`)).json().data.length, 4);
    const level = (await get(ctx(), owner.token, ids[0]!)).json().result.risk_level;
    assert.ok((await list(ctx(), owner.token, `entity_id=${mine}&risk_level=${level}`)).json().data.length >= 1);
    // Pages of two, following the cursor, give the same five.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { data: { id: string }[]; next_cursor: string | null } = (
        await list(ctx(), owner.token, `entity_id=${mine}&limit=2${cursor ? `&cursor=${cursor}` : ''}`)
      ).json();
      seen.push(...page.data.map((d) => d.id));
      cursor = page.next_cursor;
    } while (cursor);
    assert.deepEqual(seen, [...ids].reverse());
    const disputes = (await list(ctx(), owner.token, 'kind=dispute')).json().data;
    assert.ok(disputes.every((d: { kind: string }) => d.kind === 'dispute_analysis') && disputes.length >= 1);
    // The admin sees the other client's decision too.
    assert.equal((await list(ctx(), adminTokenValue, `entity_id=${mine}`)).json().data.length, 6);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    assert.equal(
      (await list(ctx(), owner.token, `entity_id=${mine}&since=${encodeURIComponent(future)}`)).json().data.length,
      0,
    );
  });

  test('GET /decisions: bad query 400 invalid_request; 401 without credentials; 403 without audit:read', async () => {
    for (const q of [
      'limit=0',
      'limit=101',
      'kind=other',
      'label=maybe',
      'since=yesterday',
      'cursor=%27',
      'risk_level=extreme',
      'bogus=1',
    ]) {
      problem(await list(ctx(), owner.token, q), 400, 'invalid_request');
    }
    problem(await ctx().inject({ method: 'GET', url: '/api/v1/decisions' }), 401, 'unauthenticated');
    const labeller = await login(ctx(), ['labels:write']);
    problem(await list(ctx(), labeller.token, ''), 403, 'insufficient_scope');
  });

  test('fuzzed query strings on the decision and policy lists never get a 5xx', async () => {
    const key = fc.constantFrom('kind', 'entity_id', 'risk_level', 'label', 'since', 'until', 'limit', 'cursor', 'x');
    const val = fc.oneof(
      fc.string({ maxLength: 30 }),
      fc.constantFrom(
        '1',
        '0',
        '-1',
        '101',
        '1e3',
        'none',
        'score',
        'dispute',
        '9999999999999999.dec_x',
        '.',
        '2026-01-01T00:00:00Z',
        '%00',
        '%ZZ',
      ),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(key, val), { maxLength: 4 }), async (pairs) => {
        const query = pairs.map(([k, v]) => `${k}=${/^%/.test(v) ? v : encodeURIComponent(v)}`).join('&');
        wellBehaved(await list(ctx(), owner.token, query), `decisions?${query}`);
        wellBehaved(
          await ctx().inject({ method: 'GET', url: `/api/v1/policies?${query}`, headers: bearer(await adminToken()) }),
          `policies?${query}`,
        );
      }),
      { numRuns: 60 },
    );
  });

  test('fuzzed label bodies never get a 5xx', async () => {
    const id = await scored('trade-fuzz');
    await fc.assert(
      fc.asyncProperty(bodies(['label', 'note']), async (text) => {
        const res = await ctx().inject({
          method: 'POST',
          url: `/api/v1/decisions/${id}/label`,
          headers: { ...bearer(owner.token), ...JSON_TYPE },
          payload: text,
        });
        wellBehaved(res, text);
      }),
      { numRuns: 60 },
    );
  });
});
