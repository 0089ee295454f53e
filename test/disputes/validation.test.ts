// Validation of POST /api/v1/dispute/analyze (issue 8): context depth, deep nesting, lone
// surrogates and control characters in identifiers, dates before 2009, wording of the detail,
// and hashed-id mode.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem, type TestContext } from '../helpers/app.ts';
import { hash } from '../helpers/trust.ts';

interface FieldErr {
  field: string;
  message: string;
}
const errorsOf = (body: Record<string, unknown>) => body.errors as FieldErr[];
const fields = (body: Record<string, unknown>) => errorsOf(body).map((e) => e.field);

let seq = 0;
function dispute(over: Record<string, unknown> = {}, trade: Record<string, unknown> = {}): Record<string, unknown> {
  seq += 1;
  return {
    dispute_id: `dsp-val-${process.pid}-${seq}`,
    trade: {
      trade_id: `trd-val-${seq}`,
      amount: 100,
      currency: 'USD',
      paid_at: new Date(Date.now() - 2 * 3_600_000).toISOString(),
      ...trade,
    },
    buyer_id: hash('val-buyer'),
    seller_id: hash('val-seller'),
    opened_by: 'buyer',
    reason: 'asset_not_released',
    ...over,
  };
}
const analyze = (ctx: TestContext, token: string, payload: Record<string, unknown>) =>
  ctx.inject({ method: 'POST', url: '/api/v1/dispute/analyze', headers: bearer(token), payload });
const analyzeText = (ctx: TestContext, token: string, payload: string) =>
  ctx.inject({
    method: 'POST',
    url: '/api/v1/dispute/analyze',
    headers: { ...bearer(token), 'content-type': 'application/json' },
    payload,
  });

describeEachBackend('dispute validation', (ctx) => {
  let admin = '';
  const token = async () => (admin ||= await ctx().token());

  test('context nests at most 5 levels: 6 levels is 400 validation_failed, 5 is 200', async () => {
    const body = problem(
      await analyze(ctx(), await token(), dispute({ context: { a: { b: { c: { d: { e: { f: 1 } } } } } } })),
      400,
      'validation_failed',
    );
    assert.deepEqual(errorsOf(body), [{ field: 'context', message: 'nests deeper than 5 levels' }]);
    assert.equal(
      (await analyze(ctx(), await token(), dispute({ context: { a: { b: { c: { d: 1 } } } } }))).statusCode,
      200,
    );
  });

  test('a 64 KiB body of nested arrays in the context, or as the whole body: 400, never a 5xx', async () => {
    const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    const n = 32_000;
    const text = JSON.stringify(dispute({ context: { x: '__DEEP__' } })).replace('"__DEEP__"', deep(n));
    const body = problem(await analyzeText(ctx(), await token(), text), 400, 'validation_failed');
    assert.deepEqual(fields(body), ['context']);
    problem(await analyzeText(ctx(), await token(), deep(n)), 400, 'validation_failed');
    problem(await analyzeText(ctx(), await token(), `{"context":${deep(n)}}`), 400, 'validation_failed');
  });

  test('lone surrogates and control characters in identifiers: 400 validation_failed', async () => {
    for (const v of ['\ud800', 'x\udfffy', 'a\u0085b', 'a\u0001b']) {
      const cases: Array<[Record<string, unknown>, string]> = [
        [dispute({ dispute_id: v }), 'dispute_id'],
        [dispute({ buyer_id: v }), 'buyer_id'],
        [dispute({ seller_id: v }), 'seller_id'],
        [dispute({}, { trade_id: v }), 'trade.trade_id'],
      ];
      for (const [payload, field] of cases) {
        const body = problem(await analyze(ctx(), await token(), payload), 400, 'validation_failed');
        assert.ok(fields(body).includes(field), `${JSON.stringify(v)} → ${fields(body).join(',')}`);
        assert.match(errorsOf(body).find((e) => e.field === field)!.message, /control character|surrogate/);
      }
    }
  });

  test('dates before 2009-01-01: 400 validation_failed naming the field', async () => {
    const old = '0001-01-01T00:00:00Z';
    const cases: Array<[Record<string, unknown>, string]> = [
      [dispute({ opened_at: old }, { paid_at: undefined }), 'opened_at'],
      [dispute({}, { created_at: old, paid_at: undefined }), 'trade.created_at'],
      [dispute({}, { paid_at: '2008-12-31T23:59:59Z' }), 'trade.paid_at'],
    ];
    for (const [payload, field] of cases) {
      const body = problem(await analyze(ctx(), await token(), payload), 400, 'validation_failed');
      assert.deepEqual(
        errorsOf(body).find((e) => e.field === field),
        { field, message: 'must not be before 2009-01-01T00:00:00Z' },
        JSON.stringify(body.errors),
      );
    }
  });

  test('detail names every missing field', async () => {
    const body = problem(await analyze(ctx(), await token(), {}), 400, 'validation_failed');
    for (const f of ['dispute_id', 'trade', 'buyer_id', 'seller_id', 'opened_by', 'reason'])
      assert.match(String(body.detail), new RegExp(`\\b${f}\\b`), String(body.detail));
    const cur = problem(
      await analyze(ctx(), await token(), dispute({}, { currency: 'usd' })),
      400,
      'validation_failed',
    );
    assert.doesNotMatch(JSON.stringify(cur), /pattern|\^\[/);
  });

  test('a raw identifier and another error: raw_identifier_rejected wins, never echoed', async () => {
    const raw = 'tel:+14155552671';
    const body = problem(
      await analyze(ctx(), await token(), dispute({ buyer_id: raw, reason: 'nope' }, { currency: 'usd' })),
      400,
      'raw_identifier_rejected',
    );
    assert.deepEqual(fields(body), ['buyer_id']);
    assert.ok(!JSON.stringify(body).includes('4155552671'));
  });
});

describeEachBackend(
  'dispute validation with VOUCH_REQUIRE_HASHED_IDS=1',
  (ctx) => {
    test('buyer_id and seller_id must be digests of >= 32 characters: 400 validation_failed', async () => {
      const admin = await ctx().token();
      const body = problem(
        await analyze(ctx(), admin, dispute({ buyer_id: 'buyer-1', seller_id: 'f'.repeat(31) })),
        400,
        'validation_failed',
      );
      assert.deepEqual(errorsOf(body), [
        { field: 'buyer_id', message: 'must be a hex or base64url digest of at least 32 characters' },
        { field: 'seller_id', message: 'must be a hex or base64url digest of at least 32 characters' },
      ]);
      assert.equal((await analyze(ctx(), admin, dispute())).statusCode, 200);
    });
  },
  { requireHashedIds: true },
);
