// POST /api/v1/labels (issue 20 item 6): up to 1,000 labels in one call, each labelled or refused
// exactly as POST /api/v1/decisions/{id}/label would, in request order, counted once by the rate limit.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem, type TestContext } from '../helpers/app.ts';
import { hash, score, postEvents, tradeHistory } from '../helpers/trust.ts';
import { SIGNAL_NAMES } from '../../src/model/policy.ts';

const bulk = (ctx: TestContext, token: string, payload: unknown, headers: Record<string, string> = {}) =>
  ctx.inject({
    method: 'POST',
    url: '/api/v1/labels',
    headers: { ...bearer(token), ...headers },
    payload: payload as Record<string, unknown>,
  });
const single = (ctx: TestContext, token: string, id: string, payload: unknown) =>
  ctx.inject({
    method: 'POST',
    url: `/api/v1/decisions/${encodeURIComponent(id)}/label`,
    headers: bearer(token),
    payload: payload as Record<string, unknown>,
  });
const decision = async (ctx: TestContext, token: string, id: string) =>
  (await ctx.inject({ method: 'GET', url: `/api/v1/decisions/${id}`, headers: bearer(token) })).json();

/** A problem document without what differs between two requests (its request id). */
const comparable = (p: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(p).filter(([k]) => k !== 'request_id'));

async function login(ctx: TestContext, scopes: string[]) {
  const c = await ctx.client(scopes);
  const res = await ctx.inject({
    method: 'POST',
    url: '/api/v1/auth/token',
    payload: { client_id: c.id, client_secret: c.secret },
  });
  assert.equal(res.statusCode, 200, res.body);
  return { id: c.id, token: res.json().access_token as string };
}

describeEachBackend('labels in bulk', (ctx) => {
  let owner: { id: string; token: string };
  let other: { id: string; token: string };
  let analysisId = '';
  const entity = hash('bulk-label-subject');
  const scored = async (who: { token: string }) => {
    const res = await score(ctx(), who.token, {
      entity_id: entity,
      amount: 100 + Math.random(),
      currency: 'USD',
      context: {},
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().decision_id as string;
  };

  before(async () => {
    owner = await login(ctx(), ['trust:read', 'trust:write', 'dispute:analyze', 'audit:read', 'labels:write']);
    other = await login(ctx(), ['trust:read', 'audit:read', 'labels:write']);
    await postEvents(ctx(), owner.token, tradeHistory(entity, 5, 30));
    const analysed = await ctx().inject({
      method: 'POST',
      url: '/api/v1/dispute/analyze',
      headers: bearer(owner.token),
      payload: {
        dispute_id: 'dsp-bulk-label',
        trade: { trade_id: 't', amount: 10, currency: 'EUR' },
        buyer_id: hash('blb'),
        seller_id: hash('bls'),
        opened_by: 'buyer',
        reason: 'other',
      },
    });
    assert.equal(analysed.statusCode, 200, analysed.body);
    analysisId = analysed.json().analysis_id;
  });

  test('each item is labelled or refused on its own, in request order, exactly as the single-label endpoint answers it', async () => {
    const [mine, mineToo, theirs] = [await scored(owner), await scored(owner), await scored(other)];
    const refused: unknown[] = [
      { decision_id: theirs, label: 'fraud' },
      { decision_id: 'dec_does_not_exist', label: 'legit' },
      { decision_id: analysisId, label: 'fraud' },
      { decision_id: mine, label: 'maybe' },
      { decision_id: mine, label: 'fraud', note: 'n'.repeat(501) },
      { decision_id: mine, label: 'fraud', extra: true },
    ];
    const items = [
      { decision_id: mine, label: 'fraud', note: 'chargeback confirmed' },
      ...refused,
      { decision_id: mineToo, label: 'legit' },
    ];
    const res = await bulk(ctx(), owner.token, { labels: items });
    assert.equal(res.statusCode, 200, res.body);
    const { results } = res.json() as { results: Record<string, unknown>[] };
    assert.equal(results.length, items.length);

    assert.equal(results[0]!.decision_id, mine);
    assert.equal(results[0]!.label, 'fraud');
    assert.equal(results[0]!.source, 'api');
    assert.equal(results[0]!.labelled_by, owner.id);
    assert.equal(results[0]!.note, 'chargeback confirmed');
    assert.equal(results[items.length - 1]!.decision_id, mineToo);
    assert.equal(results[items.length - 1]!.label, 'legit');

    // What the single endpoint answers for the same items (path id, body without decision_id).
    const expected = [404, 404, 409, 400, 400, 400];
    for (const [i, item] of (refused as Record<string, unknown>[]).entries()) {
      const got = results[i + 1]!;
      assert.equal(got.status, expected[i], `item ${i + 1}: ${JSON.stringify(got)}`);
      assert.equal(typeof got.request_id, 'string');
      const { decision_id: id, ...body } = item;
      const alone = await single(ctx(), owner.token, String(id), body);
      assert.equal(alone.statusCode, expected[i], alone.body);
      assert.deepEqual(comparable(got), comparable(alone.json()), `item ${i + 1} differs from the single endpoint`);
    }

    // The refused items left everything as it was; the accepted ones are stored.
    assert.equal((await decision(ctx(), owner.token, mine)).label.label, 'fraud');
    assert.equal((await decision(ctx(), owner.token, mine)).label.note, 'chargeback confirmed');
    assert.equal((await decision(ctx(), owner.token, mineToo)).label.label, 'legit');
    assert.equal((await decision(ctx(), other.token, theirs)).label, null);
  });

  test('a decision named twice ends with the later label, as two single calls would leave it', async () => {
    const id = await scored(owner);
    const res = await bulk(ctx(), owner.token, {
      labels: [
        { decision_id: id, label: 'fraud' },
        { decision_id: id, label: 'legit', note: 'reversed on appeal' },
      ],
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(
      res.json().results.map((r: { label: string }) => r.label),
      ['fraud', 'legit'],
    );
    const shown = (await decision(ctx(), owner.token, id)).label;
    assert.equal(shown.label, 'legit');
    assert.equal(shown.note, 'reversed on appeal');
  });

  test("an admin labels any client's decision, as with the single endpoint", async () => {
    const id = await scored(other);
    const res = await bulk(ctx(), await ctx().token(), { labels: [{ decision_id: id, label: 'fraud' }] });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().results[0].label, 'fraud');
  });

  test('the request itself: 1–1000 items, labels required, nothing else; labels:write; at most 1 MiB', async () => {
    const id = await scored(owner);
    problem(await bulk(ctx(), owner.token, { labels: [] }), 400, 'validation_failed');
    problem(await bulk(ctx(), owner.token, {}), 400, 'validation_failed');
    problem(
      await bulk(ctx(), owner.token, { labels: [{ decision_id: id, label: 'fraud' }], more: 1 }),
      400,
      'validation_failed',
    );
    const tooMany = Array.from({ length: 1001 }, () => ({ decision_id: id, label: 'legit' }));
    const over = problem(await bulk(ctx(), owner.token, { labels: tooMany }), 400, 'validation_failed');
    assert.match(JSON.stringify(over.errors), /at most 1000 items/);
    const readOnly = await login(ctx(), ['audit:read']);
    problem(
      await bulk(ctx(), readOnly.token, { labels: [{ decision_id: id, label: 'fraud' }] }),
      403,
      'insufficient_scope',
    );
    problem(
      await ctx().inject({
        method: 'POST',
        url: '/api/v1/labels',
        payload: { labels: [{ decision_id: id, label: 'fraud' }] },
      }),
      401,
      'unauthenticated',
    );
    const big = Array.from({ length: 3 }, () => ({ decision_id: id, label: 'legit', note: 'x'.repeat(400_000) }));
    const tooLarge = await bulk(ctx(), owner.token, { labels: big });
    assert.equal(tooLarge.statusCode, 413, tooLarge.body);
    assert.equal((await decision(ctx(), owner.token, id)).label, null, 'a refused request labelled something');
  });
});

/** Score decisions written straight to the store, so creating them costs no rate-limit budget. */
async function storedDecisions(ctx: TestContext, clientId: string, count: number): Promise<string[]> {
  const features = JSON.stringify(Object.fromEntries(SIGNAL_NAMES.map((n) => [n, 0])));
  const rows = Array.from({ length: count }, (_, i) => ({
    id: `dec_bulk_${i}`,
    kind: 'score',
    environment: 'live',
    principal_id: clientId,
    owner_client_id: clientId,
    subject_id: hash(`bulk-e${i}`),
    request_digest: 'd',
    result: '{}',
    policy_version: 'v',
    created_at: Date.now() - 1000,
    features,
    feature_set: 2,
  }));
  for (let i = 0; i < rows.length; i += 200)
    await ctx.store.db
      .insertInto('decisions')
      .values(rows.slice(i, i + 200) as never)
      .execute();
  return rows.map((r) => r.id);
}

describeEachBackend(
  'labels in bulk and the rate limit',
  (ctx) => {
    test("1,000 labels in one call count as one request against the principal's budget", async () => {
      const c = await ctx().client(['labels:write', 'audit:read']);
      const token = (
        await ctx().inject({
          method: 'POST',
          url: '/api/v1/auth/token',
          payload: { client_id: c.id, client_secret: c.secret },
        })
      ).json().access_token as string;
      const ids = await storedDecisions(ctx(), c.id, 1000);
      const res = await bulk(ctx(), token, {
        labels: ids.map((id, i) => ({ decision_id: id, label: i % 10 === 0 ? 'fraud' : 'legit' })),
      });
      assert.equal(res.statusCode, 200, res.body.slice(0, 500));
      assert.equal(res.headers['ratelimit-limit'], '3');
      assert.equal(res.headers['ratelimit-remaining'], '2');
      const results = res.json().results as { decision_id: string; label: string }[];
      assert.deepEqual(
        results.map((r) => r.decision_id),
        ids,
      );
      const labelled = await ctx()
        .store.db.selectFrom('decisions')
        .select(({ fn }) => fn.countAll<number>().as('n'))
        .where('id', 'in', ids)
        .where('label', 'is not', null)
        .executeTakeFirstOrThrow();
      assert.equal(Number(labelled.n), 1000);
    });
  },
  { rateLimit: { perSecond: 1, burst: 3, tokenPerMinute: 100_000, tokenFailuresPerMinute: 100_000 } },
);
