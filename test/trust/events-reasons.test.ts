// dispute.resolved's optional `reason` (docs/api.md, "Events"): every valid value accepted, anything
// else a 400 problem, and the loser's per-reason counts of fraud-naming losses kept at ingest.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem, type TestContext } from '../helpers/app.ts';
import { event, hash, postEvents } from '../helpers/trust.ts';
import { DISPUTE_REASONS } from '../../src/model/dispute-reasons.ts';
import { FRAUDULENT_LOSS_REASONS } from '../../src/trust/schemas.ts';

const post = (ctx: TestContext, token: string, events: unknown[]) =>
  ctx.inject({ method: 'POST', url: '/api/v1/trust/events', headers: bearer(token), payload: { events } });
const fields = (body: Record<string, unknown>) => (body.errors as Array<{ field: string }>).map((e) => e.field);

async function lossCounts(ctx: TestContext, id: string) {
  const row = await ctx.store.db
    .selectFrom('entities')
    .select([
      'disputes_lost',
      'disputes_lost_third_party_payment',
      'disputes_lost_fake_proof',
      'disputes_lost_underpayment',
      'disputes_lost_no_payment',
    ])
    .where('environment', '=', 'live')
    .where('entity_id', '=', id)
    .executeTakeFirstOrThrow();
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v)]));
}

describeEachBackend('dispute.resolved reasons', (ctx) => {
  let admin = '';
  const token = async () => (admin ||= await ctx().token());

  test('every dispute reason and fraud outcome is accepted on dispute.resolved', async () => {
    const reasons = [...new Set([...DISPUTE_REASONS, ...FRAUDULENT_LOSS_REASONS])];
    assert.equal(reasons.length, 10);
    const id = hash('reasons-all');
    const batch = reasons.map((reason, i) =>
      event('dispute.resolved', id, { trade_id: `t-${i}`, resolution: i % 2 ? 'against' : 'in_favor', reason }),
    );
    assert.deepEqual(await postEvents(ctx(), await token(), batch), { accepted: reasons.length, duplicates: 0 });
  });

  test('an unknown reason, a non-string reason, or a reason on another event type: 400 naming the field, nothing stored', async () => {
    const id = hash('reasons-bad');
    for (const reason of ['stolen_card', '', 'FAKE_PROOF', 3]) {
      const res = await post(ctx(), await token(), [event('dispute.resolved', id, { resolution: 'against', reason })]);
      assert.deepEqual(
        [...new Set(fields(problem(res, 400, 'validation_failed')))],
        ['events.0.reason'],
        String(reason),
      );
    }
    const res = await post(ctx(), await token(), [
      event('trade.completed', id, { amount: 5, currency: 'EUR' }),
      event('chargeback', id, { reason: 'fake_proof' }),
    ]);
    assert.deepEqual(fields(problem(res, 400, 'validation_failed')), ['events.1.reason']);
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `/api/v1/trust/entities/${id}`, headers: bearer(await token()) }))
        .statusCode,
      404,
    );
  });

  test('the loser counts its fraud-naming losses per reason, mirrored to the counterparty, once per event', async () => {
    const a = hash('reasons-a');
    const b = hash('reasons-b');
    const batch = [
      event('dispute.resolved', a, { trade_id: 'r1', resolution: 'against', reason: 'fake_proof' }),
      event('dispute.resolved', a, { trade_id: 'r2', resolution: 'against', reason: 'fake_proof' }),
      event('dispute.resolved', a, { trade_id: 'r3', resolution: 'against', reason: 'asset_not_released' }),
      event('dispute.resolved', a, { trade_id: 'r4', resolution: 'against' }),
      // a won: the counterparty b lost, and the reason is b's
      event('dispute.resolved', a, {
        trade_id: 'r5',
        resolution: 'in_favor',
        counterparty_id: b,
        reason: 'third_party_payment',
      }),
      event('dispute.resolved', b, {
        trade_id: 'r6',
        resolution: 'against',
        counterparty_id: a,
        reason: 'underpayment',
      }),
    ];
    assert.deepEqual(await postEvents(ctx(), await token(), batch), { accepted: 6, duplicates: 0 });
    // a re-send counts nothing twice
    assert.deepEqual(await postEvents(ctx(), await token(), batch), { accepted: 0, duplicates: 6 });
    await postEvents(ctx(), await token(), [
      event('dispute.resolved', b, { trade_id: 'r7', resolution: 'against', reason: 'no_payment' }),
    ]);
    assert.deepEqual(await lossCounts(ctx(), a), {
      disputes_lost: 4,
      disputes_lost_third_party_payment: 0,
      disputes_lost_fake_proof: 2,
      disputes_lost_underpayment: 0,
      disputes_lost_no_payment: 0,
    });
    assert.deepEqual(await lossCounts(ctx(), b), {
      disputes_lost: 3,
      disputes_lost_third_party_payment: 1,
      disputes_lost_fake_proof: 0,
      disputes_lost_underpayment: 1,
      disputes_lost_no_payment: 1,
    });
  });
});
