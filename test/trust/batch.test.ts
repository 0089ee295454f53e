// POST /api/v1/trust/score/batch (docs/api.md, "Integration"): results in order, each scored and audited as a
// single call; invalid items get the single endpoint's problem in place; envelope limits; fuzz.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';
import { JSON_TYPE, RUNS, bodies, wellBehaved } from '../helpers/fuzz.ts';
import { hash, postEvents, tradeHistory } from '../helpers/trust.ts';

const BATCH = '/api/v1/trust/score/batch';
const SCORE = '/api/v1/trust/score';
const SCORE_KEYS = ['entity_id', 'amount', 'currency', 'context'];

describeEachBackend('Batch scoring', (ctx) => {
  let admin: string;
  const batch = (requests: unknown, token = admin) =>
    ctx().inject({ method: 'POST', url: BATCH, headers: bearer(token), payload: { requests } });
  const stripId = (body: Record<string, unknown>) => ({ ...body, request_id: undefined });

  before(async () => {
    admin = await ctx().token();
    await postEvents(ctx(), admin, tradeHistory(hash('batch-veteran'), 40, 200));
  });

  test('valid requests: 200, one score per request in order, each audited as its own decision', async () => {
    const ids = [hash('batch-veteran'), hash('batch-new-1'), hash('batch-new-2')];
    const res = await batch(ids.map((entity_id, i) => ({ entity_id, amount: 100 + i, currency: 'USD' })));
    assert.equal(res.statusCode, 200, res.body);
    const { results } = res.json() as { results: Array<Record<string, unknown>> };
    assert.equal(results.length, 3);
    assert.deepEqual(
      results.map((r) => r.entity_id),
      ids,
    );
    for (const r of results) {
      assert.match(String(r.decision_id), /^dec_/);
      const row = await ctx()
        .store.db.selectFrom('decisions')
        .selectAll()
        .where('id', '=', String(r.decision_id))
        .executeTakeFirst();
      assert.ok(row, 'decision stored');
      assert.equal(row.subject_id, r.entity_id);
      assert.equal(row.kind, 'score');
    }
    // The same request scored on its own gives the same score.
    const single = await ctx().inject({
      method: 'POST',
      url: SCORE,
      headers: bearer(admin),
      payload: { entity_id: ids[0], amount: 100, currency: 'USD' },
    });
    assert.equal(single.json().score, results[0]!.score);
  });

  test("invalid items: the single endpoint's problem (status, code, errors) in place; the others still scored", async () => {
    const bad = [
      { entity_id: 'alice@example.com', amount: 5, currency: 'USD' },
      { entity_id: hash('x'), amount: 5, currency: 'usd' },
      { entity_id: hash('x'), amount: -1, currency: 'USD', extra: true },
      { entity_id: hash('x'), amount: 5, currency: 'XYZ' },
      'not an object',
    ];
    const good = { entity_id: hash('batch-good'), amount: 10, currency: 'BTC' };
    const res = await batch([bad[0], good, ...bad.slice(1)]);
    assert.equal(res.statusCode, 200, res.body);
    const { results } = res.json() as { results: Array<Record<string, unknown>> };
    assert.equal(results.length, 6);
    assert.equal(results[1]!.entity_id, good.entity_id);
    assert.equal(typeof results[1]!.score, 'number');
    const problems = [results[0]!, ...results.slice(2)];
    for (const [i, item] of bad.entries()) {
      const single = await ctx().inject({
        method: 'POST',
        url: SCORE,
        headers: { ...bearer(admin), ...JSON_TYPE },
        payload: JSON.stringify(item),
      });
      assert.equal(single.statusCode, 400);
      const inPlace = problems[i]!;
      assert.equal(inPlace.status, 400);
      assert.equal(inPlace.request_id, res.headers['x-request-id']);
      assert.deepEqual(stripId(inPlace), stripId(single.json()), `item ${i}`);
    }
    assert.equal(problems[0]!.code, 'raw_identifier_rejected');
    assert.ok(!res.body.includes('alice@example.com'));
  });

  test('envelope: empty, over 100, not an array, unknown member: 400 validation_failed; 100 items: 200', async () => {
    problem(await batch([]), 400, 'validation_failed');
    const one = { entity_id: hash('batch-many'), amount: 1, currency: 'USD' };
    problem(await batch(Array(101).fill(one)), 400, 'validation_failed');
    problem(await batch('nope'), 400, 'validation_failed');
    problem(
      await ctx().inject({ method: 'POST', url: BATCH, headers: bearer(admin), payload: { requests: [one], more: 1 } }),
      400,
      'validation_failed',
    );
    const full = await batch(Array(100).fill(one));
    assert.equal(full.statusCode, 200);
    assert.equal(full.json().results.length, 100);
  });

  test('body limit 1 MiB: 200 KiB accepted (over the 64 KiB default), over 1 MiB 413', async () => {
    const ctxPad = { note: 'p'.repeat(2000) };
    const items = Array.from({ length: 100 }, (_, i) => ({
      entity_id: hash(`pad-${i}`),
      amount: 1,
      currency: 'USD',
      context: ctxPad,
    }));
    assert.equal((await batch(items)).statusCode, 200);
    const huge = Array.from({ length: 100 }, (_, i) => ({
      entity_id: hash(`huge-${i}`),
      amount: 1,
      currency: 'USD',
      context: { note: 'q'.repeat(11_000) },
    }));
    problem(await batch(huge), 413, 'payload_too_large');
  });

  test('auth: 401 without credentials, 403 without trust:read', async () => {
    problem(await ctx().inject({ method: 'POST', url: BATCH, payload: { requests: [] } }), 401, 'unauthenticated');
    problem(
      await batch([{ entity_id: hash('a'), amount: 1, currency: 'USD' }], await ctx().token(['trust:write'])),
      403,
      'insufficient_scope',
    );
  });

  test('fuzz: random items and envelopes never answer 5xx; one result per item', async () => {
    const envelopes = fc
      .array(bodies(SCORE_KEYS), { minLength: 1, maxLength: 5 })
      .map((items) => `{"requests":[${items.join(',')}]}`);
    await fc.assert(
      fc.asyncProperty(fc.oneof(envelopes, bodies(['requests'])), async (body) => {
        const res = await ctx().inject({
          method: 'POST',
          url: BATCH,
          headers: { ...bearer(admin), ...JSON_TYPE },
          payload: body,
        });
        wellBehaved(res, body);
        if (res.statusCode === 200) {
          for (const r of res.json().results as Array<Record<string, unknown>>) {
            if ('status' in r) assert.ok(Number(r.status) >= 400 && Number(r.status) < 500, JSON.stringify(r));
          }
        }
      }),
      { numRuns: Math.ceil(RUNS / 3) },
    );
  });
});
