// Issue 29 item 11: the environment's one fit-or-backtest slot is an operator's, and shared fairly
// (docs/api.md, "Policies"): a service key cannot hold it with a backtest; a client refused while
// it was busy takes the next turn, so the client that just ran a job cannot take it straight back;
// an admin's turn outranks another's and an admin never waits behind a non-admin's.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { backends, bearer, describeEachBackend, freshStore, problem, type TestStore } from '../helpers/app.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import { acquireLease, JobConflictError, releaseLease, runningJob } from '../../src/policies/jobs.ts';
import { JobTurnError, TURN_HOLD_MS } from '../../src/policies/job-turns.ts';

describeEachBackend('backtests need role operator', (ctx) => {
  test('a policy:read service key gets 403 insufficient_scope; an operator with policy:read runs the backtest', async () => {
    const url = `/api/v1/policies/${DEFAULT_POLICY.version}/backtest`;
    const service = await ctx().token(['policy:read'], 'service');
    const refused = problem(
      await ctx().inject({ method: 'POST', url, headers: bearer(service), payload: {} }),
      403,
      'insufficient_scope',
    );
    assert.match(String(refused.detail), /role operator/);
    const operator = await ctx().token(['policy:read'], 'operator');
    const ran = await ctx().inject({ method: 'POST', url, headers: bearer(operator), payload: {} });
    assert.equal(ran.statusCode, 200, ran.body);
  });
});

for (const backend of backends()) {
  describe(`fair turns at the job slot [${backend}]`, () => {
    let fresh: TestStore;
    before(async () => {
      fresh = await freshStore(backend);
    });
    after(async () => {
      await fresh?.drop();
    });
    const a = { clientId: 'client-a', admin: false };
    const b = { clientId: 'client-b', admin: false };
    const admin = { clientId: 'client-admin', admin: true };

    test('a client refused while the slot was busy gets it next; the client that just held it is refused until then', async () => {
      const db = fresh.store.db;
      const now = Date.now();
      const first = await acquireLease(db, 'live', 'backtest', now, undefined, a);
      await assert.rejects(acquireLease(db, 'live', 'fit', now + 1, undefined, b), JobConflictError);
      await releaseLease(db, 'live', first);
      // The slot is free, but it is b's turn: a, asking again at once, is refused with a time to retry.
      await assert.rejects(
        acquireLease(db, 'live', 'backtest', now + 2, undefined, a),
        (err: unknown) => err instanceof JobTurnError && err.retryAfterSeconds > 0,
      );
      assert.equal(await runningJob(db, 'live'), undefined);
      const second = await acquireLease(db, 'live', 'fit', now + 3, undefined, b);
      await releaseLease(db, 'live', second);
      // b's turn is used up; a (which waited meanwhile) may claim.
      await releaseLease(db, 'live', await acquireLease(db, 'live', 'backtest', now + 4, undefined, a));
    });

    test('a turn lapses when its client stops asking', async () => {
      const db = fresh.store.db;
      const now = Date.now();
      const first = await acquireLease(db, 'live', 'backtest', now, undefined, a);
      await assert.rejects(acquireLease(db, 'live', 'fit', now + 1, undefined, b), JobConflictError);
      await releaseLease(db, 'live', first);
      await releaseLease(db, 'live', await acquireLease(db, 'live', 'backtest', now + 2 + TURN_HOLD_MS, undefined, a));
    });

    test("an admin never waits behind a non-admin's turn, and an admin's turn outranks it", async () => {
      const db = fresh.store.db;
      const now = Date.now() + 10 * TURN_HOLD_MS;
      const first = await acquireLease(db, 'live', 'backtest', now, undefined, a);
      await assert.rejects(acquireLease(db, 'live', 'fit', now + 1, undefined, b), JobConflictError);
      await releaseLease(db, 'live', first);
      // b holds the turn; the admin claims past it.
      const adminJob = await acquireLease(db, 'live', 'fit', now + 2, undefined, admin);
      await releaseLease(db, 'live', adminJob);
      // Busy again (b's turn): a refused admin takes the turn over, and b waits behind it.
      const bJob = await acquireLease(db, 'live', 'fit', now + 3, undefined, b);
      await assert.rejects(acquireLease(db, 'live', 'fit', now + 4, undefined, admin), JobConflictError);
      await releaseLease(db, 'live', bJob);
      await assert.rejects(acquireLease(db, 'live', 'backtest', now + 5, undefined, b), JobTurnError);
      await releaseLease(db, 'live', await acquireLease(db, 'live', 'fit', now + 6, undefined, admin));
    });

    test("the host's own jobs (the CLI, no claimant) are never held back by a turn", async () => {
      const db = fresh.store.db;
      const now = Date.now() + 20 * TURN_HOLD_MS;
      const first = await acquireLease(db, 'test', 'backtest', now, undefined, a);
      await assert.rejects(acquireLease(db, 'test', 'fit', now + 1, undefined, b), JobConflictError);
      await releaseLease(db, 'test', first);
      await releaseLease(db, 'test', await acquireLease(db, 'test', 'fit', now + 2));
    });
  });
}
