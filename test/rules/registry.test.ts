// docs/rules.md and docs/api.md, "Rules and lists": the in-memory registry a score decides through
// (a stored rule that no longer compiles is skipped and counted; run-time errors are counted in
// vouch_rule_errors_total{rule}; an entry's expiry moves the revision alike on every instance),
// and `vouch lists import` (CSV and NDJSON, rejected lines reported, the rest imported).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Counter, Registry } from 'prom-client';
import { backends, freshStore, type TestStore } from '../helpers/app.ts';
import { hash } from '../helpers/trust.ts';
import { ChangeFeed } from '../../src/store/change-feed.ts';
import { RuleRegistry } from '../../src/rules/registry.ts';
import { createRule } from '../../src/rules/repository.ts';
import { addListEntries, createList, deleteList, ListConflictError, removeListEntry } from '../../src/rules/lists.ts';
import { importListFile } from '../../src/rules/cli.ts';
import { checkOrThrow } from '../../src/rules/routes.ts';
import { HIDDEN_CHARACTERS_MESSAGE } from '../../src/lib/plain-text.ts';
import type { RuleFacts } from '../../src/model/outcomes.ts';

const facts = (over: Partial<RuleFacts> = {}): RuleFacts => ({
  entity_id: hash('registry'),
  amount: 50,
  currency: 'USD',
  amount_ref: null,
  context: {},
  entity: {
    account_age_days: 3,
    completed_trades: 0,
    chargebacks: 0,
    fraud_reports: 0,
    disputes_lost: 0,
    first_seen_at: null,
  },
  signals: {},
  score: 10,
  risk_level: 'low',
  safe_amount: 500,
  ...over,
});

/** What the live environment's lists hold, as the bound reads it. */
async function heldIn(db: TestStore['store']['db']): Promise<{ entries: number; chars: number }> {
  const row = await db
    .selectFrom('lists')
    .select((eb) => [eb.fn.sum<number>('held_entries').as('entries'), eb.fn.sum<number>('held_chars').as('chars')])
    .where('environment', '=', 'live')
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return { entries: Number(row.entries ?? 0), chars: Number(row.chars ?? 0) };
}

for (const backend of backends()) {
  describe(`rule registry and list import [${backend}]`, () => {
    let fresh: TestStore;
    let feed: ChangeFeed;
    let dir = '';
    const change = () => ({ environment: 'live' as const, by: 'tester', now: Date.now() });

    before(async () => {
      fresh = await freshStore(backend);
      feed = new ChangeFeed(fresh.store);
      dir = mkdtempSync(join(tmpdir(), 'vouch-lists-'));
    });
    after(async () => {
      await fresh?.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    test('decides with active rules and lists; counts run-time errors and skipped rules by rule id', async () => {
      const db = fresh.store.db;
      await createList(db, feed, change(), { name: 'deny', kind: 'entity' });
      const deny = await createRule(
        db,
        feed,
        change(),
        { name: 'deny', condition: 'in_list("deny", entity_id)', action: 'decline' },
        'active',
        checkOrThrow,
      );
      const fragile = await createRule(
        db,
        feed,
        change(),
        { name: 'fragile', condition: 'context.channel == "web"', action: 'review' },
        'active',
        checkOrThrow,
      );
      await createRule(
        db,
        feed,
        change(),
        { name: 'drafted', condition: 'amount > 1.0', action: 'decline' },
        'draft',
        checkOrThrow,
      );
      // a stored rule that does not compile (saved under another engine, say)
      await db
        .insertInto('rules')
        .values({
          id: 'rul_broken',
          environment: 'live',
          name: 'broken',
          version: 1,
          status: 'active',
          body: JSON.stringify({ name: 'broken', condition: 'nope >', action: 'decline' }),
          created_at: 1,
          created_by: 'x',
          updated_at: 1,
          updated_by: 'x',
        })
        .execute();
      const registry = new RuleRegistry(fresh.store);
      await registry.reload();
      const metrics = new Registry();
      const errors = new Counter({
        name: 'vouch_rule_errors_total',
        help: 'h',
        labelNames: ['rule'],
        registers: [metrics],
      });
      registry.meter(errors as Counter<'rule'>);
      assert.deepEqual(registry.summary('live'), { revision: 4, rules: 2, skipped: 1, entries: 0 });
      const now = Date.now();
      // context.channel absent: a run-time error, no match, counted
      const verdict = registry.decide('live', facts(), 'approve', now);
      assert.equal(verdict.outcome, 'approve');
      const counted = async () => Object.fromEntries((await errors.get()).values.map((v) => [v.labels.rule, v.value]));
      assert.deepEqual(await counted(), { rul_broken: 1, [fragile.id]: 1 });
      assert.equal(registry.decide('live', facts({ context: { channel: 'web' } }), 'approve', now).outcome, 'review');
      await addListEntries(db, 'live', 'deny', [hash('registry')], 'tester', {}, now);
      await registry.reload('live');
      const denied = registry.decide('live', facts({ context: { channel: 'app' } }), 'approve', now);
      assert.equal(denied.outcome, 'decline');
      assert.equal(denied.rules[0]!.id, deny.id);
      // the test environment has none of it
      assert.equal(registry.decide('test', facts(), 'approve', now).rules.length, 0);
    });

    test('an expiry moves the revision at its time and leaves memory; an instance that loaded after it names the same revision', async () => {
      const db = fresh.store.db;
      await createList(db, feed, change(), { name: 'brief', kind: 'string' });
      const now = Date.now();
      await addListEntries(db, 'live', 'brief', ['a'], 'tester', { expiresAt: now + 60_000 }, now);
      await addListEntries(db, 'live', 'brief', ['gone'], 'tester', { expiresAt: now - 5_000 }, now - 10_000);
      const early = new RuleRegistry(fresh.store);
      await early.reload();
      const [revision] = early.revision('live', now).split('.');
      assert.equal(early.revision('live', now), `${revision}.${now + 60_000}`);
      assert.equal(early.revision('live', now + 59_999), `${revision}.${now + 60_000}`);
      const held = early.summary('live').entries;
      assert.ok(early.has('live', 'brief', 'a', now));
      assert.equal(early.has('live', 'brief', 'gone', now - 6_000), false, 'expired before the load: never held');
      assert.equal(early.revision('live', now + 60_000), `${revision}.never`);
      assert.equal(early.summary('live').entries, held - 1, 'the expired entry left memory');
      const late = new RuleRegistry(fresh.store);
      await late.reload();
      assert.equal(late.revision('live', now + 120_000), early.revision('live', now + 120_000));
    });

    test('a reload reads only what changed since its revision, and ends where a full load does', async () => {
      const db = fresh.store.db;
      const now = Date.now();
      await createList(db, feed, change(), { name: 'churn', kind: 'string' });
      await createList(db, feed, change(), { name: 'doomed', kind: 'string' });
      await addListEntries(db, 'live', 'churn', ['keep', 'drop', 'again', 'brief'], 'tester', {}, now);
      await addListEntries(db, 'live', 'doomed', ['d1'], 'tester', {}, now);
      const incremental = new RuleRegistry(fresh.store);
      await incremental.reload();
      assert.ok(incremental.has('live', 'churn', 'drop', now));
      await removeListEntry(db, feed, change(), 'churn', 'drop');
      await removeListEntry(db, feed, change(), 'churn', 'again');
      await addListEntries(db, 'live', 'churn', ['again', 'new'], 'tester', {}, now);
      await addListEntries(db, 'live', 'churn', ['brief'], 'tester', { expiresAt: now + 1000 }, now);
      await deleteList(db, feed, change(), 'doomed');
      await createList(db, feed, change(), { name: 'doomed', kind: 'string' });
      await addListEntries(db, 'live', 'doomed', ['d2'], 'tester', {}, now);
      await incremental.reload('live');
      const full = new RuleRegistry(fresh.store);
      await full.reload();
      for (const [list, value, present] of [
        ['churn', 'keep', true],
        ['churn', 'drop', false],
        ['churn', 'again', true],
        ['churn', 'new', true],
        ['churn', 'brief', true],
        ['doomed', 'd1', false],
        ['doomed', 'd2', true],
      ] as const) {
        assert.equal(incremental.has('live', list, value, now), present, `${list} ${value}`);
        assert.equal(full.has('live', list, value, now), present, `${list} ${value} (full)`);
      }
      // 'brief' was already present: it keeps its entry, without an expiry
      assert.equal(incremental.revision('live', now + 5000), full.revision('live', now + 5000));
      assert.deepEqual(incremental.summary('live'), full.summary('live'));
    });

    test('the bound on present entries: a batch that would pass it adds nothing (ListConflictError); expired entries are swept, kept at their expiry', async () => {
      const db = fresh.store.db;
      const now = Date.now();
      await createList(db, feed, change(), { name: 'bounded', kind: 'string' });
      // what an earlier test left expired is swept by the first add that would pass the bound
      const expired = await db
        .selectFrom('list_entries')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('removed_at', 'is', null)
        .where('expires_at', '<=', now)
        .executeTakeFirstOrThrow();
      const held = await heldIn(db);
      const bound = { entries: held.entries - Number(expired.n) + 2, chars: Number.MAX_SAFE_INTEGER };
      await addListEntries(
        db,
        'live',
        'bounded',
        ['short-1', 'short-2'],
        'tester',
        { expiresAt: now + 5000, bound },
        now,
      );
      await assert.rejects(addListEntries(db, 'live', 'bounded', ['b1'], 'tester', { bound }, now), ListConflictError);
      assert.equal((await db.selectFrom('list_entries').select('value').where('value', '=', 'b1').execute()).length, 0);
      // once the two short entries expired, there is room again
      assert.deepEqual(await addListEntries(db, 'live', 'bounded', ['b1', 'b2'], 'tester', { bound }, now + 10_000), {
        added: 2,
        already_present: 0,
      });
      const swept = await db
        .selectFrom('list_entries')
        .select(['value', 'removed_at', 'removed_by'])
        .where('value', 'like', 'short-%')
        .orderBy('value')
        .execute();
      assert.deepEqual(
        swept.map((r) => [r.value, Number(r.removed_at), r.removed_by]),
        [
          ['short-1', now + 5000, 'expiry'],
          ['short-2', now + 5000, 'expiry'],
        ],
      );
      assert.equal((await heldIn(db)).entries, bound.entries);
    });

    test("the bound on values' characters: long values fill it before the count does", async () => {
      const db = fresh.store.db;
      const now = Date.now();
      await createList(db, feed, change(), { name: 'long-values', kind: 'string' });
      const held = await heldIn(db);
      const bound = { entries: Number.MAX_SAFE_INTEGER, chars: held.chars + 600 };
      await addListEntries(db, 'live', 'long-values', ['a'.repeat(256), 'b'.repeat(256)], 'tester', { bound }, now);
      await assert.rejects(
        addListEntries(db, 'live', 'long-values', ['c'.repeat(256)], 'tester', { bound }, now),
        /characters of values/,
      );
      await removeListEntry(db, feed, change(), 'long-values', 'a'.repeat(256));
      assert.deepEqual(await heldIn(db), { entries: held.entries + 1, chars: held.chars + 256 });
      await addListEntries(db, 'live', 'long-values', ['c'.repeat(256)], 'tester', { bound }, now + 1);
    });

    test('vouch lists import: CSV and NDJSON in batches, bad lines reported and the rest added', async () => {
      const db = fresh.store.db;
      await createList(db, feed, change(), { name: 'imported', kind: 'country' });
      const csv = join(dir, 'countries.csv');
      writeFileSync(
        csv,
        'value,reason\nNG,"sanctions, 2026"\ngh,\nXX,typo\n\nNG,again\n"FR,open quote\n"D"E,after the quote\nDE\u200b,zero-width\n',
      );
      const first = await importListFile(fresh.store, 'live', 'imported', csv, 'csv', 'cli');
      assert.deepEqual(
        { ...first, failures: first.failures.map((f) => [f.line, f.reason]) },
        {
          added: 2,
          already_present: 1,
          rejected: 4,
          failures: [
            [4, 'is not an assigned ISO 3166-1 alpha-2 country code'],
            [7, 'a quote is not closed (a record does not span lines)'],
            [8, 'text after a closing quote at column 4'],
            [9, HIDDEN_CHARACTERS_MESSAGE],
          ],
        },
      );
      const nd = join(dir, 'more.ndjson');
      // a reason per line: still 1,000 lines a transaction (each moves the revision once)
      const lines = Array.from({ length: 2500 }, (_, i) =>
        JSON.stringify({ value: `v${i}`, reason: i < 1200 ? 'one' : i < 1300 ? 'two' : `case ${i}` }),
      );
      await createList(db, feed, change(), { name: 'bulk', kind: 'string' });
      writeFileSync(
        nd,
        `${lines.join('\n')}\nnot json\n${JSON.stringify({ value: 'late', expires_at: '2001-01-01T00:00:00Z' })}\n`,
      );
      const revision = async () =>
        Number(
          (
            await db
              .selectFrom('rule_revisions')
              .select('revision')
              .where('environment', '=', 'live')
              .executeTakeFirstOrThrow()
          ).revision,
        );
      const before = await revision();
      const second = await importListFile(fresh.store, 'live', 'bulk', nd, 'ndjson', 'cli');
      assert.equal(second.added, 2500);
      assert.equal(second.rejected, 2);
      assert.equal((await revision()) - before, 3, 'three transactions for 2,500 lines');
      const reasons = await db
        .selectFrom('list_entries')
        .select(['reason', (eb) => eb.fn.countAll<number>().as('n')])
        .where('value', 'like', 'v%')
        .where('reason', 'in', ['one', 'two', 'case 2499'])
        .groupBy('reason')
        .orderBy('reason')
        .execute();
      assert.deepEqual(
        reasons.map((r) => [r.reason, Number(r.n)]),
        [
          ['case 2499', 1],
          ['one', 1200],
          ['two', 100],
        ],
      );
      await assert.rejects(importListFile(fresh.store, 'live', 'missing', nd, 'ndjson', 'cli'), /no list missing/);
    });
  });
}
