// Who held a review is in the audit log (docs/api.md, "Audit log"): a claim, a `next` and a release
// that changed the review each write an entry naming their actor, in the change's transaction; a
// refused claim (another's, or a resolved review) and a release of a review one does not hold write none.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, ADMIN_ID } from '../helpers/app.ts';
import { seedReviews } from './support.ts';
import { caller, makeKey, readLog, type Key } from '../audit-log/support.ts';

describeEachBackend('review claims in the audit log', (ctx) => {
  const call = caller(ctx);
  let first: Key;
  let second: Key;
  let auditor: Key;

  before(async () => {
    auditor = await makeKey(ctx(), 'compliance key', 'admin');
    first = await makeKey(ctx(), 'first reviewer key', 'operator');
    second = await makeKey(ctx(), 'second reviewer key', 'operator');
  });

  const entries = async (action: string, id: string) =>
    (await readLog(ctx(), auditor, `action=${action}`)).filter((e) => e.target === `review:${id}`);

  test('a claim and a release are entries naming who; a refused claim and a release of what one does not hold are not', async () => {
    const [seeded] = await seedReviews(ctx().store.db, [{ owner: ADMIN_ID }]);
    const id = seeded!.review!.id;
    assert.equal((await call(first, 'POST', `/api/v1/reviews/${id}/claim`)).statusCode, 200);
    assert.equal((await call(second, 'POST', `/api/v1/reviews/${id}/claim`)).statusCode, 409);
    assert.equal((await call(second, 'POST', `/api/v1/reviews/${id}/release`)).statusCode, 409);
    const claimed = await entries('review.claimed', id);
    assert.deepEqual(
      claimed.map((e) => [e.actor.type, e.actor.id, e.actor.name]),
      [['client', first.id, 'first reviewer key']],
    );
    assert.equal((await call(first, 'POST', `/api/v1/reviews/${id}/release`)).statusCode, 200);
    const released = await entries('review.released', id);
    assert.deepEqual(
      released.map((e) => e.actor.id),
      [first.id],
    );
  });

  test('next claims the review due first and says so in the log', async () => {
    await seedReviews(ctx().store.db, [{ owner: ADMIN_ID }]);
    const next = await call(second, 'POST', '/api/v1/reviews/next', {});
    assert.equal(next.statusCode, 200, next.body);
    const { id } = next.json() as { id: string };
    // the log is newest first; the review may be the one released above, claimed before by another
    const [latest] = await entries('review.claimed', id);
    assert.equal(latest?.actor.id, second.id);
  });
});
