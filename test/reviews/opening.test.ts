// docs/api.md, "Reviews": a decision that opens a review is stored with it in one commit (group
// commit included), a failed commit stores neither, and the opening survives the trip to the
// host's writer (cluster mode: audit/host-writer.ts serialises rows as JSON over the channel).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../helpers/app.ts';
import { DecisionWriter, type DecisionRow } from '../../src/audit/decisions.ts';
import { HostWriter, answerCall, decisionHandler, type WriterChannel } from '../../src/audit/host-writer.ts';
import { decisionRow } from './support.ts';

/** A worker's channel to a primary in this process, JSON both ways as the cluster channel is. */
function channelTo(writer: DecisionWriter): WriterChannel {
  const listeners: Array<(m: unknown) => void> = [];
  return {
    send: (message) => {
      const copy = JSON.parse(JSON.stringify(message)) as unknown;
      setImmediate(
        () =>
          void answerCall({ decisions: decisionHandler(writer) }, copy, (answer) => {
            setImmediate(() => listeners.forEach((l) => l(JSON.parse(JSON.stringify(answer)))));
          }),
      );
    },
    onMessage: (l) => listeners.push(l),
    onClose: () => {},
  };
}

describeEachBackend('reviews opened with their decisions', (ctx) => {
  const reviewsOf = (ids: string[]) =>
    ctx().store.db.selectFrom('reviews').selectAll().where('decision_id', 'in', ids).execute();
  const decisionsOf = (ids: string[]) =>
    ctx().store.db.selectFrom('decisions').select(['id', 'outcome']).where('id', 'in', ids).execute();

  test('a group of decisions, some opening reviews: every review stored with its decision, as opened', async () => {
    const writer = new DecisionWriter(ctx().store.db);
    const rows: DecisionRow[] = Array.from({ length: 30 }, (_, i) =>
      decisionRow({
        owner: 'client-open',
        outcome: i % 3 === 0 ? 'hold' : i % 3 === 1 ? 'review' : 'approve',
        review: i % 3 !== 2,
      }),
    );
    await Promise.all(rows.map((r) => writer.write(r)));
    const ids = rows.map((r) => r.id);
    assert.equal((await decisionsOf(ids)).length, 30);
    const reviews = await reviewsOf(ids);
    assert.equal(reviews.length, 20);
    for (const review of reviews) {
      const row = rows.find((r) => r.id === review.decision_id)!;
      assert.deepEqual(
        {
          id: review.id,
          environment: review.environment,
          owner: review.owner_client_id,
          entity: review.entity_id,
          outcome: review.outcome,
          reason: review.reason,
          status: review.status,
          opened_at: Number(review.opened_at),
          due_at: Number(review.due_at),
          assignee: review.assignee,
        },
        {
          id: row.review!.id,
          environment: 'live',
          owner: 'client-open',
          entity: row.subject_id,
          outcome: row.outcome,
          reason: 'outcome',
          status: 'open',
          opened_at: row.created_at,
          due_at: row.review!.due_at,
          assignee: null,
        },
      );
    }
  });

  test('a sampled approval keeps its reason and rate (the fit weighs its label by the inverse of the rate)', async () => {
    const writer = new DecisionWriter(ctx().store.db);
    const row = decisionRow({ owner: 'client-sample', outcome: 'approve' });
    await writer.write(row);
    const [review] = await reviewsOf([row.id]);
    assert.equal(review!.reason, 'sample');
    assert.equal(Number(review!.sample_rate), 0.02);
  });

  test('a commit that fails stores neither the decisions nor their reviews', async () => {
    const writer = new DecisionWriter(ctx().store.db);
    const first = decisionRow({ owner: 'client-fail' });
    await writer.write(first);
    // A group whose decision insert fails (an id already stored) after nothing, and one whose review insert fails (a
    // review id already stored).
    const clash = [{ ...decisionRow({ owner: 'client-fail' }), id: first.id }, decisionRow({ owner: 'client-fail' })];
    const reviewClash = [decisionRow({ owner: 'client-fail' }), decisionRow({ owner: 'client-fail' })];
    reviewClash[1]!.review = { ...reviewClash[1]!.review!, id: first.review!.id };
    for (const group of [clash, reviewClash]) {
      const outcomes = await Promise.allSettled(group.map((r) => writer.write(r)));
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['rejected', 'rejected'],
      );
    }
    const ids = [...clash, ...reviewClash].map((r) => r.id).filter((id) => id !== first.id);
    assert.deepEqual(await decisionsOf(ids), []);
    assert.deepEqual(
      (await reviewsOf([...ids, first.id])).map((r) => r.decision_id),
      [first.id],
    );
  });

  test("through the host's writer (cluster mode), the opening crosses the channel and is stored with its decision", async () => {
    const host = new DecisionWriter(ctx().store.db);
    const worker = new DecisionWriter(ctx().store.db, undefined, {
      commit: new HostWriter(channelTo(host)).decisionCommit(),
    });
    const rows = Array.from({ length: 12 }, (_, i) =>
      decisionRow({ owner: 'client-host', review: i % 2 === 0, outcome: i % 4 === 0 ? 'hold' : 'review' }),
    );
    await Promise.all(rows.map((r) => worker.write(r)));
    const reviews = await reviewsOf(rows.map((r) => r.id));
    assert.deepEqual(
      reviews.map((r) => r.id).sort(),
      rows
        .filter((r) => r.review)
        .map((r) => r.review!.id)
        .sort(),
    );
    for (const review of reviews)
      assert.equal(Number(review.due_at), rows.find((r) => r.id === review.decision_id)!.review!.due_at);
  });
});
