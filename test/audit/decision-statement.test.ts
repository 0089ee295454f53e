// A group of decisions and the reviews they open (audit/decisions.ts): on PostgreSQL one statement
// (store/statement-inserts.ts), its own transaction, so one round trip; stored exactly as given, and
// all or nothing (docs/api.md, "Reviews").
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { backends, freshStore, type TestStore } from '../helpers/app.ts';
import { DecisionWriter, type DecisionRow } from '../../src/audit/decisions.ts';
import { decisionRow } from '../reviews/support.ts';

for (const backend of backends()) {
  describe(`decisions and their reviews written together [${backend}]`, () => {
    let t: TestStore;
    before(async () => {
      t = await freshStore(backend);
    });
    after(async () => {
      await t.drop();
    });

    const stored = (ids: string[]) =>
      t.store.db.selectFrom('decisions').selectAll().where('id', 'in', ids).orderBy('id').execute();
    const reviews = (ids: string[]) =>
      t.store.db.selectFrom('reviews').selectAll().where('decision_id', 'in', ids).orderBy('id').execute();

    /** Writes `rows` as one group (submitted in one turn), counting the store's queries meanwhile. */
    async function writeCounting(writer: DecisionWriter, rows: DecisionRow[]): Promise<PromiseSettledResult<void>[]> {
      let queries = 0;
      t.store.observeQueries!(() => queries++);
      try {
        const outcomes = await Promise.allSettled(rows.map((r) => writer.write(r)));
        counted = queries;
        return outcomes;
      } finally {
        t.store.observeQueries!(undefined);
      }
    }
    let counted = 0;

    test('a group with reviews is stored as given (on PostgreSQL in one round trip)', async () => {
      const writer = new DecisionWriter(t.store.db);
      const rows = Array.from({ length: 23 }, (_, i) => {
        const row = decisionRow({
          owner: 'client-one',
          outcome: i % 3 === 0 ? 'hold' : 'approve',
          review: i % 2 === 0,
        });
        // a sampled approval's rate is a double, stored to the last digit
        if (row.review?.reason === 'sample') row.review.sample_rate = 0.1 + 0.2;
        return row;
      }).map((row, i) => ({
        ...row,
        shadow_version: 'shadow-1',
        shadow_score: 61 + i,
        feature_set: 3,
        trade_id: i % 4 === 0 ? null : `trade-"${i}"\\`,
        cache_key: `key-${i}`,
        claim: null,
      }));
      const outcomes = await writeCounting(writer, rows);
      for (const o of outcomes) if (o.status === 'rejected') throw o.reason;
      if (backend === 'postgres') assert.equal(counted, 1, 'one statement for the group');
      const byId = new Map(rows.map((r) => [r.id, r]));
      const got = await stored(rows.map((r) => r.id));
      assert.equal(got.length, rows.length);
      for (const d of got) {
        const row = byId.get(d.id)!;
        for (const column of [
          'kind',
          'environment',
          'principal_id',
          'owner_client_id',
          'subject_id',
          'request_digest',
          'result',
          'policy_version',
          'created_at',
          'cache_key',
          'features',
          'feature_set',
          'trade_id',
          'risk_level',
          'shadow_version',
          'shadow_score',
          'request',
          'outcome',
          'rules',
        ] as const)
          assert.deepEqual(d[column], row[column] ?? null, column);
        assert.equal(d.claim, null);
        assert.equal(d.label, null);
      }
      const opened = await reviews(rows.map((r) => r.id));
      assert.deepEqual(
        opened.map((r) => [r.id, r.decision_id, r.status, r.reason, r.sample_rate, Number(r.due_at)]),
        rows
          .filter((r) => r.review)
          .map((r) => [r.review!.id, r.id, 'open', r.review!.reason, r.review!.sample_rate, r.review!.due_at])
          .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      );
    });

    test('a group whose review cannot be stored leaves none of its decisions', async () => {
      const writer = new DecisionWriter(t.store.db);
      const first = decisionRow({ owner: 'client-two' });
      await writer.write(first);
      const group = Array.from({ length: 5 }, () => decisionRow({ owner: 'client-two' }));
      // the last decision's review takes an id already stored: the reviews' insert fails after the decisions'
      group[4]!.review = { ...group[4]!.review!, id: first.review!.id };
      const outcomes = await writeCounting(writer, group);
      assert.deepEqual(
        outcomes.map((o) => o.status),
        Array(5).fill('rejected'),
      );
      const ids = group.map((r) => r.id);
      assert.deepEqual(await stored(ids), []);
      assert.deepEqual(await reviews(ids), []);
      // the store is usable after the failed statement
      const next = decisionRow({ owner: 'client-two' });
      await writer.write(next);
      assert.equal((await reviews([next.id])).length, 1);
    });

    if (backend === 'postgres')
      test('a lone surrogate is stored as U+FFFD, as a bound parameter stores it', async () => {
        const writer = new DecisionWriter(t.store.db);
        const row = { ...decisionRow({ owner: 'client-three' }), trade_id: 'a\ud800b\udc00c\\ud800' };
        await writer.write(row);
        const [d] = await stored([row.id]);
        assert.equal(d!.trade_id, 'a\ufffdb\ufffdc\\ud800');
      });
  });
}
