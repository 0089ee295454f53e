// `vouch reviews list|stats` (docs/api.md, "Reviews"): the queue from a terminal, every client's
// reviews of the environment, as a table or JSON.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { backends, freshStore, type TestStore } from '../helpers/app.ts';
import { runCli } from '../helpers/processes.ts';
import { HOUR, seedReviews } from './support.ts';
import type { DecisionRow } from '../../src/audit/decisions.ts';

for (const backend of backends()) {
  describe(`vouch reviews [${backend}]`, () => {
    let fresh: TestStore;
    let rows: DecisionRow[] = [];
    before(async () => {
      fresh = await freshStore(backend);
      rows = await seedReviews(fresh.store.db, [
        { owner: 'client-a', outcome: 'hold', dueIn: -HOUR },
        { owner: 'client-b', outcome: 'review', dueIn: HOUR },
        { owner: 'client-a', outcome: 'review', dueIn: 2 * HOUR },
        { owner: 'client-a', environment: 'test' },
      ]);
      await fresh.store.db
        .updateTable('reviews')
        .set({
          status: 'resolved',
          resolution: 'decline',
          resolution_label: 'fraud',
          resolved_at: Date.now(),
          resolved_by: 'key_x',
          assignee: 'key_x',
        })
        .where('id', '=', rows[2]!.review!.id)
        .execute();
    });
    after(async () => {
      await fresh.drop();
    });
    const env = () => ({ VOUCH_DATABASE_URL: fresh.url });

    test('list: a table under a header, unresolved due first then resolved, every client; filters; JSON lines', async () => {
      const out = await runCli(['reviews', 'list'], env());
      assert.equal(out.code, 0, out.stderr);
      const lines = out.stdout.trim().split('\n');
      assert.equal(
        lines[0],
        'id\tstatus\toutcome\tdue_at\toverdue\tscore\tamount\tcurrency\tassignee\tresolution\tentity_id',
      );
      assert.deepEqual(
        lines.slice(1).map((l) => l.split('\t')[0]),
        [rows[0]!, rows[1]!, rows[2]!].map((r) => r.review!.id),
      );
      assert.deepEqual(
        lines[1]!
          .split('\t')
          .slice(1, 5)
          .map((c, i) => (i === 2 ? typeof c : c)),
        ['open', 'hold', 'string', 'yes'],
      );
      const held = await runCli(['reviews', 'list', '--outcome', 'hold', '--json'], env());
      assert.equal(held.code, 0, held.stderr);
      const records = held.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { id: string; outcome: string; owner_client_id: string });
      assert.deepEqual(
        records.map((r) => r.id),
        [rows[0]!.review!.id],
      );
      const resolved = await runCli(['reviews', 'list', '--status', 'resolved', '--json'], env());
      assert.deepEqual(
        resolved.stdout
          .trim()
          .split('\n')
          .map((l) => (JSON.parse(l) as { resolution: string }).resolution),
        ['decline'],
      );
      const testMode = await runCli(['reviews', 'list', '--environment', 'test', '--json'], env());
      assert.deepEqual(
        testMode.stdout
          .trim()
          .split('\n')
          .map((l) => (JSON.parse(l) as { id: string }).id),
        [rows[3]!.review!.id],
      );
      const bad = await runCli(['reviews', 'list', '--status', 'pending'], env());
      assert.notEqual(bad.code, 0);
    });

    test('stats: the figures as text and as JSON', async () => {
      const out = await runCli(['reviews', 'stats', '--json'], env());
      assert.equal(out.code, 0, out.stderr);
      const s = JSON.parse(out.stdout) as Record<string, unknown>;
      assert.equal(s.open, 2);
      assert.equal(s.overdue, 1);
      assert.equal(s.resolved_24h, 1);
      assert.deepEqual(s.agreement, { approve: 0, decline: 1 });
      const text = await runCli(['reviews', 'stats'], env());
      assert.match(text.stdout, /^open\t2$/m);
      assert.match(text.stdout, /^overdue\t1$/m);
    });
  });
}
