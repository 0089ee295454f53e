// Issue 29 item 10: a bulk label call costs its items, not one request (docs/api.md, "Outcomes and
// labels"). Each principal has a budget of labels a minute (VOUCH_LABELS_PER_MINUTE): a batch beyond
// what is left gets 429 rate_limited with Retry-After and labels nothing; another principal's budget
// is its own. The labels are written in chunks, giving the event loop a turn between them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bearer, describeEachBackend, problem, type TestContext } from '../helpers/app.ts';
import { hash } from '../helpers/trust.ts';
import { SIGNAL_NAMES } from '../../src/model/policy.ts';

let seq = 0;
/** Score decisions written straight to the store, so creating them costs no budget. */
async function storedDecisions(ctx: TestContext, clientId: string, count: number): Promise<string[]> {
  const features = JSON.stringify(Object.fromEntries(SIGNAL_NAMES.map((n) => [n, 0])));
  const batch = ++seq;
  const rows = Array.from({ length: count }, (_, i) => ({
    id: `dec_budget_${batch}_${i}`,
    kind: 'score',
    environment: 'live',
    principal_id: clientId,
    owner_client_id: clientId,
    subject_id: hash(`budget-e${i}`),
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

async function labeller(ctx: TestContext) {
  const c = await ctx.client(['labels:write', 'audit:read']);
  const res = await ctx.inject({
    method: 'POST',
    url: '/api/v1/auth/token',
    payload: { client_id: c.id, client_secret: c.secret },
  });
  return { id: c.id, token: res.json().access_token as string };
}

const bulk = (ctx: TestContext, token: string, ids: string[]) =>
  ctx.inject({
    method: 'POST',
    url: '/api/v1/labels',
    headers: bearer(token),
    payload: { labels: ids.map((id) => ({ decision_id: id, label: 'fraud' })) },
  });

const labelledCount = async (ctx: TestContext, ids: string[]) =>
  Number(
    (
      await ctx.store.db
        .selectFrom('decisions')
        .select(({ fn }) => fn.countAll<number>().as('n'))
        .where('id', 'in', ids)
        .where('label', 'is not', null)
        .executeTakeFirstOrThrow()
    ).n,
  );

describeEachBackend(
  'labels in bulk: a budget of labels a minute',
  (ctx) => {
    test("a full batch spends the minute's 1,000 labels; the next batch gets 429 with Retry-After and labels nothing; another principal is unaffected", async () => {
      const me = await labeller(ctx());
      const first = await storedDecisions(ctx(), me.id, 1000);
      const ok = await bulk(ctx(), me.token, first);
      assert.equal(ok.statusCode, 200, ok.body.slice(0, 300));
      assert.equal(await labelledCount(ctx(), first), 1000);

      const more = await storedDecisions(ctx(), me.id, 5);
      const refused = problem(await bulk(ctx(), me.token, more), 429, 'rate_limited');
      assert.match(String(refused.detail), /1000 labels a minute/);
      const again = await bulk(ctx(), me.token, more);
      assert.equal(again.statusCode, 429);
      const retryAfter = Number(again.headers['retry-after']);
      assert.ok(retryAfter >= 1 && retryAfter <= 60, String(again.headers['retry-after']));
      assert.equal(await labelledCount(ctx(), more), 0, 'a refused batch labels nothing');

      const other = await labeller(ctx());
      const theirs = await storedDecisions(ctx(), other.id, 20);
      assert.equal((await bulk(ctx(), other.token, theirs)).statusCode, 200);
      // The single-label route is the per-request limit's alone.
      const single = await ctx().inject({
        method: 'POST',
        url: `/api/v1/decisions/${more[0]}/label`,
        headers: bearer(me.token),
        payload: { label: 'legit' },
      });
      assert.equal(single.statusCode, 200, single.body);
    });

    test('a batch is written in chunks: the event loop gets turns while 1,000 labels are written', async () => {
      const me = await labeller(ctx());
      const ids = await storedDecisions(ctx(), me.id, 1000);
      let turns = 0;
      let done = false;
      const tick = () => {
        turns++;
        if (!done) setImmediate(tick);
      };
      const request = bulk(ctx(), me.token, ids).finally(() => (done = true));
      setImmediate(tick);
      const res = await request;
      assert.equal(res.statusCode, 200, res.body.slice(0, 300));
      // One turn at least between each two of the ten chunks.
      assert.ok(turns >= 9, `the event loop had ${turns} turns during the batch`);
      assert.equal(await labelledCount(ctx(), ids), 1000);
    });
  },
  { labelsPerMinute: 1000 },
);
