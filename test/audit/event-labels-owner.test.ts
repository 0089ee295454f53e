// Issue 29 item 13: an outcome event labels only the decisions of the client that sent it
// (docs/api.md, "Outcomes and labels"). Another client scoring the same entity and trade keeps its
// decisions unlabelled: trade ids are the marketplace's own, and two clients may reuse one.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, type TestContext } from '../helpers/app.ts';
import { hash, score, postEvents, event, tradeHistory } from '../helpers/trust.ts';

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

describeEachBackend('outcome event labels stay with the sending client', (ctx) => {
  const scopes = ['trust:read', 'trust:write', 'audit:read', 'labels:write'];
  let a: { id: string; token: string };
  let b: { id: string; token: string };
  const entity = hash('event-label-owner-subject');

  before(async () => {
    a = await login(ctx(), scopes);
    b = await login(ctx(), scopes);
    await postEvents(ctx(), a.token, tradeHistory(entity, 3, 20));
  });

  const scored = async (who: { token: string }, tradeId: string) => {
    const res = await score(ctx(), who.token, {
      entity_id: entity,
      amount: 120,
      currency: 'USD',
      context: { trade_id: tradeId },
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().decision_id as string;
  };
  const labelOf = async (who: { token: string }, id: string) =>
    (await ctx().inject({ method: 'GET', url: `/api/v1/decisions/${id}`, headers: bearer(who.token) })).json().label;

  test("a dispute.resolved from one client labels its own decision of the trade, never the other client's", async () => {
    const mine = await scored(a, 'shared-trade-1');
    const theirs = await scored(b, 'shared-trade-1');
    await postEvents(ctx(), a.token, [
      event('dispute.resolved', entity, { trade_id: 'shared-trade-1', resolution: 'against' }, 1000),
    ]);
    const own = await labelOf(a, mine);
    assert.deepEqual([own?.label, own?.source, own?.labelled_by], ['fraud', 'event', a.id]);
    assert.equal(await labelOf(b, theirs), null);
  });

  test("a chargeback or fraud report from one client leaves the other client's decisions of that trade alone", async () => {
    const theirs = await scored(b, 'shared-trade-2');
    await postEvents(ctx(), a.token, [
      event('chargeback', entity, { trade_id: 'shared-trade-2', amount: 10, currency: 'USD' }, 1000),
      event('fraud.reported', entity, { trade_id: 'shared-trade-2' }, 900),
    ]);
    assert.equal(await labelOf(b, theirs), null);
    // The owner's own event still labels it.
    await postEvents(ctx(), b.token, [event('fraud.reported', entity, { trade_id: 'shared-trade-2' }, 800)]);
    const own = await labelOf(b, theirs);
    assert.deepEqual([own?.label, own?.labelled_by], ['fraud', b.id]);
  });
});
