// GET /api/v1/trust/entities/{entity_id}: every event type reflected in the aggregates.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem, type TestContext } from '../helpers/app.ts';
import { event, hash, postEvents } from '../helpers/trust.ts';

const HOUR = 3_600_000;
const entity = (ctx: TestContext, token: string, id: string) =>
  ctx.inject({ method: 'GET', url: `/api/v1/trust/entities/${encodeURIComponent(id)}`, headers: bearer(token) });

describeEachBackend('trust entity aggregates', (ctx) => {
  let admin = '';
  const token = async () => (admin ||= await ctx().token());

  test('each of the 9 event types is reflected in the aggregates: 200', async () => {
    const id = hash('all-types');
    const cp = hash('all-types-counterparty');
    const phone = hash('+15550002222');
    const device = hash('device-all-types');
    const events = [
      event('trade.completed', id, { amount: 100, currency: 'USD', counterparty_id: cp, trade_id: 't1' }, 10 * HOUR),
      event('trade.completed', id, { amount: 250.5, currency: 'USD' }, 9 * HOUR),
      event('trade.completed', id, { amount: 0.5, currency: 'BTC' }, 8 * HOUR),
      event('trade.cancelled', id, {}, 7 * HOUR),
      event('dispute.opened', id, { trade_id: 't1' }, 6 * HOUR),
      event('dispute.opened', id, { trade_id: 't2' }, 6 * HOUR),
      event('dispute.opened', id, { trade_id: 't3' }, 6 * HOUR),
      event('dispute.resolved', id, { trade_id: 't1', resolution: 'in_favor' }, 5 * HOUR),
      event('dispute.resolved', id, { trade_id: 't2', resolution: 'against' }, 5 * HOUR),
      event('dispute.resolved', id, { trade_id: 't3', resolution: 'against' }, 5 * HOUR),
      event('chargeback', id, { amount: 100, currency: 'USD' }, 4 * HOUR),
      event('fraud.reported', id, {}, 3 * HOUR),
      event(
        'identifier.linked',
        id,
        {
          linked_identifiers: [
            { type: 'phone', hash: phone },
            { type: 'device', hash: device },
          ],
        },
        2 * HOUR,
      ),
      event('entity.blocklisted', id, {}, 2 * HOUR),
    ];
    assert.deepEqual(await postEvents(ctx(), await token(), events), { accepted: events.length, duplicates: 0 });
    const res = await entity(ctx(), await token(), id);
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(body, {
      entity_id: id,
      first_seen_at: events[0]!.occurred_at,
      last_event_at: events.at(-1)!.occurred_at,
      trades_completed: 3,
      trades_cancelled: 1,
      volume_completed: { BTC: 0.5, USD: 350.5 },
      disputes_opened: 3,
      disputes_won: 1,
      disputes_lost: 2,
      chargebacks: 1,
      fraud_reports: 1,
      blocklisted: true,
      linked_identifiers: [
        { type: 'device', hash: device, entities: 1 },
        { type: 'phone', hash: phone, entities: 1 },
      ],
    });

    // entity.unblocklisted, newer than the blocklisting: no longer blocklisted
    await postEvents(ctx(), await token(), [event('entity.unblocklisted', id, {}, HOUR)]);
    const after = (await entity(ctx(), await token(), id)).json();
    assert.equal(after.blocklisted, false);
    assert.ok(Date.parse(after.last_event_at) > Date.parse(String(body.last_event_at)));
    assert.equal(after.first_seen_at, body.first_seen_at);
    // linked_identifiers on any event type join the graph too; re-linking is not a duplicate row
    const bank = hash('bank-all-types');
    await postEvents(ctx(), await token(), [
      event(
        'trade.cancelled',
        id,
        {
          linked_identifiers: [
            { type: 'bank_account', hash: bank },
            { type: 'phone', hash: phone },
          ],
        },
        HOUR,
      ),
    ]);
    assert.deepEqual((await entity(ctx(), await token(), id)).json().linked_identifiers, [
      { type: 'bank_account', hash: bank, entities: 1 },
      { type: 'device', hash: device, entities: 1 },
      { type: 'phone', hash: phone, entities: 1 },
    ]);
  });

  test('blocklist changes apply by occurred_at, whatever order they arrive in', async () => {
    // An older unblocklist arriving after a newer blocklist keeps the entity blocklisted.
    const late = hash('late-unblock');
    await postEvents(ctx(), await token(), [event('entity.blocklisted', late, {}, HOUR)]);
    await postEvents(ctx(), await token(), [event('entity.unblocklisted', late, {}, 5 * HOUR)]);
    let body = (await entity(ctx(), await token(), late)).json();
    assert.equal(body.blocklisted, true);
    assert.equal(Date.parse(body.first_seen_at) < Date.parse(body.last_event_at), true);

    // An older blocklist arriving after a newer unblocklist leaves it unblocklisted.
    const early = hash('late-block');
    await postEvents(ctx(), await token(), [event('entity.unblocklisted', early, {}, HOUR)]);
    await postEvents(ctx(), await token(), [event('entity.blocklisted', early, {}, 5 * HOUR)]);
    assert.equal((await entity(ctx(), await token(), early)).json().blocklisted, false);

    // Within one batch the array order does not matter either.
    const same = hash('same-batch-block');
    await postEvents(ctx(), await token(), [
      event('entity.blocklisted', same, {}, HOUR),
      event('entity.unblocklisted', same, {}, 2 * HOUR),
    ]);
    body = (await entity(ctx(), await token(), same)).json();
    assert.equal(body.blocklisted, true);
  });

  test('never-seen entity: 404 not_found; an entity only named as a counterparty is not known either', async () => {
    problem(await entity(ctx(), await token(), hash('never-seen')), 404, 'not_found');
    const cp = hash('only-a-counterparty');
    await postEvents(ctx(), await token(), [
      event('trade.completed', hash('has-a-counterparty'), { amount: 1, currency: 'USD', counterparty_id: cp }),
    ]);
    problem(await entity(ctx(), await token(), cp), 404, 'not_found');
  });

  test('a raw identifier in the path: 400 raw_identifier_rejected, never echoed', async () => {
    for (const raw of ['+15551234567', 'alice@example.com', 'DE89 3704 0044 0532 0130 00', '4111 1111 1111 1111']) {
      const body = problem(await entity(ctx(), await token(), raw), 400, 'raw_identifier_rejected');
      assert.deepEqual(
        (body.errors as Array<{ field: string }>).map((e) => e.field),
        ['entity_id'],
      );
      assert.ok(!JSON.stringify(body).includes(raw));
    }
  });

  test('reading aggregates requires trust:read: 403 insufficient_scope; no credentials: 401', async () => {
    const id = hash('read-scope');
    await postEvents(ctx(), await token(), [event('trade.cancelled', id)]);
    assert.equal((await entity(ctx(), await ctx().token(['trust:read']), id)).statusCode, 200);
    problem(await entity(ctx(), await ctx().token(['dispute:analyze']), id), 403, 'insufficient_scope');
    problem(await ctx().inject({ method: 'GET', url: `/api/v1/trust/entities/${id}` }), 401, 'unauthenticated');
  });
});
