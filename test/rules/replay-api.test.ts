// docs/api.md, "Rules and lists" (testing a rule): POST /api/v1/rules/test and /rules/{id}/test on
// stored score decisions, with the lists as they were at each decision's time, on both stores.
// Decisions and lists are inserted directly, so each test knows exactly what was stored.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem, type TestContext } from '../helpers/app.ts';
import { storeSource } from '../../src/store/readers.ts';
import {
  RuleTestBusyError,
  RuleTestStoppedError,
  runRuleTest,
  type ReplayTask,
} from '../../src/rules/replay-thread.ts';
import { SIGNAL_NAMES, DEFAULT_POLICY } from '../../src/model/policy.ts';
import { replayPages } from '../../src/rules/replay-store.ts';
import { listHistoryRows } from '../../src/rules/list-history-repository.ts';
import { columnsRead } from '../../src/rules/replay-columns.ts';
import { listWithHistory } from './list-history.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;

interface Stored {
  id: string;
  entity?: string;
  at: number;
  amount?: number;
  currency?: string;
  level?: string;
  outcome?: string | null;
  label?: 'fraud' | 'legit' | null;
  environment?: 'live' | 'test';
  owner?: string;
}

let seq = 0;
async function insert(ctx: TestContext, rows: Stored[]): Promise<void> {
  await ctx.store.db
    .insertInto('decisions')
    .values(
      rows.map((r) => {
        const level = r.level ?? 'low';
        const amount = r.amount ?? 100;
        return {
          environment: r.environment ?? 'live',
          id: r.id,
          kind: 'score',
          principal_id: 'p',
          owner_client_id: r.owner ?? 'c',
          subject_id: r.entity ?? `ent-${seq++}`,
          request_digest: 'd',
          policy_version: 'v1',
          created_at: r.at,
          cache_key: null,
          cache_state: null,
          result: JSON.stringify({
            entity_id: r.entity ?? 'x',
            score: level === 'critical' ? 90 : 10,
            risk_level: level,
            signals: [],
            safe_amount: 500,
          }),
          request: JSON.stringify({ amount, currency: r.currency ?? 'USDT', payment_method: 'card' }),
          features: JSON.stringify({ velocity_trades: 1 }),
          feature_set: 3,
          risk_level: level,
          outcome: r.outcome === undefined ? 'approve' : r.outcome,
          label: r.label ?? null,
          label_source: r.label ? 'api' : null,
          rule_inputs: JSON.stringify({
            amount_ref: amount / 100,
            context: { payment_method: 'card' },
            entity: {
              account_age_days: 2,
              completed_trades: 0,
              chargebacks: 0,
              fraud_reports: 0,
              disputes_lost: 0,
              first_seen_at: null,
            },
            safe_amount: 500,
          }),
        };
      }),
    )
    .execute();
}

describeEachBackend('testing a rule on the past', (ctx) => {
  let token = '';
  const now = Date.now();
  // Every test writes its decisions in a 20-day window of its own, 20 days from the next (and
  // from the last 30 days, which the default-window test uses).
  const windowOf = (n: number) => ({ since: now - 40 * DAY * (n + 1), until: now - 40 * DAY * (n + 1) + 20 * DAY });
  const iso = (t: number) => new Date(t).toISOString();
  const post = (url: string, payload: Record<string, unknown>, t = token) =>
    ctx().inject({ method: 'POST', url, headers: bearer(t), payload });
  const testRule = (rule: Record<string, unknown>, window?: { since: number; until: number }) =>
    post('/api/v1/rules/test', {
      rule: { name: 'under test', action: 'decline', ...rule },
      ...(window ? { since: iso(window.since), until: iso(window.until) } : {}),
    });

  before(async () => {
    // an admin replays every client's decisions; a client its own (the last test)
    token = await ctx().token(['rules:read'], 'admin');
  });

  test('counts, outcomes before and after, the labelled matrix, money per currency and examples with reads', async () => {
    const w = windowOf(1);
    const at = (h: number) => w.since + h * HOUR;
    await insert(ctx(), [
      { id: 'dec_a1', at: at(1), amount: 1500, label: 'fraud' },
      { id: 'dec_a2', at: at(2), amount: 2000, currency: 'EUR', label: 'legit' },
      { id: 'dec_a3', at: at(3), amount: 1200.5, outcome: 'review', level: 'high' },
      { id: 'dec_a4', at: at(4), amount: 50, label: 'fraud' },
      { id: 'dec_a5', at: at(5), amount: 50, outcome: null, level: 'critical' },
      { id: 'dec_a6', at: at(6), amount: 5000, environment: 'test' },
    ]);
    const res = await testRule({ condition: 'amount > 1000.0', action: 'hold' }, w);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.decisions, 5, 'the other environment is not replayed');
    assert.equal(body.matched, 3);
    assert.deepEqual(body.outcomes.before, { approve: 3, review: 1, hold: 0, decline: 1 });
    assert.deepEqual(body.outcomes.after, { approve: 1, review: 0, hold: 3, decline: 1 });
    assert.deepEqual(body.labelled, { fraud: { matched: 1, total: 2 }, legit: { matched: 1, total: 1 } });
    assert.deepEqual(body.amount_matched, { EUR: 2000, USDT: 2700.5 });
    assert.deepEqual(body.by_label, {
      fraud: { changed: 1, amount_matched: { USDT: 1500 } },
      legit: { changed: 1, amount_matched: { EUR: 2000 } },
      unlabelled: { changed: 1, amount_matched: { USDT: 1200.5 } },
    });
    assert.equal(body.excluded, 0);
    // what the rule adds beyond what is already reviewed or declined
    const beyond = await post('/api/v1/rules/test', {
      rule: { name: 'under test', condition: 'amount > 1000.0', action: 'hold' },
      since: iso(w.since),
      until: iso(w.until),
      exclude_outcomes: ['review', 'decline'],
    });
    assert.equal(beyond.statusCode, 200, beyond.body);
    assert.deepEqual(
      [beyond.json().decisions, beyond.json().excluded, beyond.json().matched, beyond.json().amount_matched],
      [5, 2, 2, { EUR: 2000, USDT: 1500 }],
    );
    assert.deepEqual(beyond.json().outcomes.before, { approve: 3, review: 0, hold: 0, decline: 0 });
    assert.deepEqual(
      body.examples.map((e: { decision_id: string }) => e.decision_id),
      ['dec_a3', 'dec_a2', 'dec_a1'],
    );
    assert.deepEqual(body.examples[0].reads, { amount: 1200.5 });
    assert.equal(body.examples[0].before, 'review');
    assert.equal(body.examples[0].after, 'hold');
    assert.equal(body.since, iso(w.since));
    assert.equal(body.until, iso(w.until));
  });

  test('at most 20 examples, the most recent', async () => {
    const w = windowOf(2);
    await insert(
      ctx(),
      Array.from({ length: 25 }, (_, i) => ({
        id: `dec_b${String(i).padStart(2, '0')}`,
        at: w.since + (i + 1) * HOUR,
        amount: 2000,
      })),
    );
    const body = (await testRule({ condition: 'amount > 1000.0' }, w)).json();
    assert.equal(body.matched, 25);
    assert.equal(body.examples.length, 20);
    assert.equal(body.examples[0].decision_id, 'dec_b24');
    assert.equal(body.examples[19].decision_id, 'dec_b05');
    for (const e of body.examples) assert.deepEqual(e.reads, { amount: 2000 });
  });

  test('the window: since inclusive, until exclusive, 30 days by default, at most 400 days', async () => {
    const w = windowOf(3);
    await insert(ctx(), [
      { id: 'dec_c_before', at: w.since - 1, amount: 2000 },
      { id: 'dec_c_first', at: w.since, amount: 2000 },
      { id: 'dec_c_last', at: w.until - 1, amount: 2000 },
      { id: 'dec_c_until', at: w.until, amount: 2000 },
    ]);
    const body = (await testRule({ condition: 'amount > 1000.0' }, w)).json();
    assert.deepEqual(
      body.examples.map((e: { decision_id: string }) => e.decision_id),
      ['dec_c_last', 'dec_c_first'],
    );

    await insert(ctx(), [
      { id: 'dec_c_recent', at: now - 2 * DAY, amount: 777 },
      { id: 'dec_c_old', at: now - 31 * DAY, amount: 777 },
    ]);
    const fallback = await testRule({ condition: 'amount == 777.0' });
    assert.equal(fallback.statusCode, 200, fallback.body);
    assert.deepEqual(
      fallback.json().examples.map((e: { decision_id: string }) => e.decision_id),
      ['dec_c_recent'],
    );
    assert.ok(Math.abs(Date.parse(fallback.json().until) - Date.parse(fallback.json().since) - 30 * DAY) < 1000);

    const long = await testRule({ condition: 'amount > 1.0' }, { since: now - 401 * DAY, until: now });
    assert.equal((problem(long, 400, 'validation_failed').errors as { field: string }[])[0]!.field, 'since');
    const reversed = await testRule({ condition: 'amount > 1.0' }, { since: now, until: now - DAY });
    problem(reversed, 400, 'validation_failed');
  });

  test('lists as they were: an entry added after a decision does not match it, a removed one matched before its removal', async () => {
    const w = windowOf(4);
    const at = (h: number) => w.since + h * HOUR;
    const db = ctx().store.db;
    await listWithHistory(db, 'mules', w.since - DAY, [
      { value: 'ent-late', addedAt: at(10) },
      { value: 'ent-gone', addedAt: at(0), removedAt: at(10) },
    ]);
    await insert(ctx(), [
      { id: 'dec_d_late_before', entity: 'ent-late', at: at(5) },
      { id: 'dec_d_late_after', entity: 'ent-late', at: at(15) },
      { id: 'dec_d_gone_before', entity: 'ent-gone', at: at(5) },
      { id: 'dec_d_gone_after', entity: 'ent-gone', at: at(15) },
    ]);
    const res = await testRule({ condition: 'in_list("mules", entity_id)' }, w);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.decisions, 4);
    assert.deepEqual(
      body.examples.map((e: { decision_id: string }) => e.decision_id),
      ['dec_d_late_after', 'dec_d_gone_before'],
    );
    assert.deepEqual(body.examples[0].reads, { entity_id: 'ent-late', 'in_list(mules, entity_id)': true });
    assert.deepEqual(body.notes, []);
    // a list filled after the decisions: the figures say why it matched none
    await listWithHistory(db, 'fresh', at(20), [{ value: 'ent-late', addedAt: at(20) }]);
    const fresh = (await testRule({ condition: 'in_list("fresh", entity_id)' }, w)).json();
    assert.equal(fresh.matched, 0);
    assert.deepEqual(fresh.notes, [
      `list "fresh" got its first entry at ${iso(at(20))}: decisions before it read it empty`,
    ]);
  });

  test("a stored rule's current version: POST /rules/{id}/test; an unknown id is 404", async () => {
    const w = windowOf(5);
    await insert(ctx(), [
      { id: 'dec_e1', at: w.since + HOUR, amount: 3000 },
      { id: 'dec_e2', at: w.since + 2 * HOUR, amount: 30 },
    ]);
    const body = JSON.stringify({ name: 'big', condition: 'amount > 2000.0', action: 'review' });
    await ctx()
      .store.db.insertInto('rules')
      .values({
        id: 'rul_stored',
        environment: 'live',
        name: 'big',
        version: 2,
        status: 'draft',
        body,
        created_at: now,
        created_by: 'x',
        updated_at: now,
        updated_by: 'x',
      })
      .execute();
    const res = await post('/api/v1/rules/rul_stored/test', { since: iso(w.since), until: iso(w.until) });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().matched, 1);
    assert.deepEqual(res.json().outcomes.after, { approve: 1, review: 1, hold: 0, decline: 0 });
    problem(await post('/api/v1/rules/rul_nope/test', {}), 404, 'not_found');
  });

  test('an invalid rule is 400 naming rule.condition and the position', async () => {
    const res = await testRule({ condition: 'amount >' });
    const errors = problem(res, 400, 'validation_failed').errors as { field: string; message: string }[];
    assert.equal(errors[0]!.field, 'rule.condition');
    assert.match(errors[0]!.message, /line 1, column \d+/);
    const unknown = (
      problem(await testRule({ condition: 'amount > 1.0 && nope == 1.0' }), 400, 'validation_failed').errors as {
        field: string;
        message: string;
      }[]
    )[0]!;
    assert.equal(unknown.field, 'rule.condition');
    assert.match(unknown.message, /nope/);
  });

  test('a caller without rules:read is 403', async () => {
    const other = await ctx().token(['trust:read']);
    problem(
      await post('/api/v1/rules/test', { rule: { name: 'x', condition: 'amount > 1.0', action: 'decline' } }, other),
      403,
      'insufficient_scope',
    );
  });

  test('one rule test per environment at a time: a second is refused while the first runs', async () => {
    const source = storeSource(ctx().store)!;
    const task: ReplayTask = {
      rule: { id: 'rul_x', version: 1, body: { name: 'x', condition: 'amount > 1.0', action: 'decline' } },
      settings: {
        outcomes: { low: 'approve', medium: 'approve', high: 'review', critical: 'decline' },
        signalNames: SIGNAL_NAMES,
        disputePrior: DEFAULT_POLICY.disputePrior,
      },
    };
    const input = { source, environment: 'live' as const, window: windowOf(1) };
    const first = runRuleTest('live', task, input);
    await assert.rejects(runRuleTest('live', task, input), RuleTestBusyError);
    // The other environment is not held up, and the first still answers.
    assert.equal((await runRuleTest('test', task, { ...input, environment: 'test' })).decisions, 1);
    assert.equal((await first).decisions, 5);
  });

  test('a rule test stops at its time limit and when its caller goes away; its worker ends, and the next test runs', async () => {
    const task: ReplayTask = {
      rule: { id: 'rul_x', version: 1, body: { name: 'x', condition: 'amount > 1.0', action: 'decline' } },
      settings: {
        outcomes: { low: 'approve', medium: 'approve', high: 'review', critical: 'decline' },
        signalNames: SIGNAL_NAMES,
        disputePrior: DEFAULT_POLICY.disputePrior,
      },
    };
    const input = { source: storeSource(ctx().store)!, environment: 'live' as const, window: windowOf(1) };
    // a store whose pages never come: only the limit ends the test
    const stalled = {
      entries: async () => [],
      pages: {
        [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<never>>(() => {}) }),
      },
    };
    await assert.rejects(
      runRuleTest('live', task, stalled, { timeMs: 50 }),
      (err: unknown) =>
        err instanceof RuleTestStoppedError && err.reason === 'time' && /limit of 0 s/.test(err.message),
    );
    const gone = new AbortController();
    const cancelled = runRuleTest('live', task, input, { signal: gone.signal });
    gone.abort();
    await assert.rejects(
      cancelled,
      (err: unknown) => err instanceof RuleTestStoppedError && err.reason === 'cancelled',
    );
    assert.ok((await runRuleTest('live', task, input)).decisions >= 0);
  });

  test("one rule test per environment across processes: another process's lease is 409 until it expires", async () => {
    const db = ctx().store.db;
    const rule = { rule: { name: 'x', condition: 'amount > 1.0', action: 'decline' } };
    await db
      .insertInto('rule_test_leases')
      .values({ environment: 'live', holder: 'rtl_elsewhere', expires_at: Date.now() + 60_000 })
      .execute();
    const res = problem(await post('/api/v1/rules/test', rule), 409, 'conflict');
    assert.match(String(res.detail), /already running/);
    // a holder that died: its lease expires, and is taken over
    await db
      .updateTable('rule_test_leases')
      .set({ expires_at: Date.now() - 1 })
      .where('environment', '=', 'live')
      .execute();
    assert.equal((await post('/api/v1/rules/test', rule)).statusCode, 200);
    assert.equal(
      (await db.selectFrom('rule_test_leases').select('holder').execute()).length,
      0,
      'released after each test',
    );
  });

  test('pages fed by the serving thread (a store that cannot be opened twice) give what the worker reads itself', async () => {
    const w = windowOf(6);
    const at = (h: number) => w.since + h * HOUR;
    const db = ctx().store.db;
    await listWithHistory(db, 'fed', w.since, [{ value: 'ent-f', addedAt: at(2), expiresAt: at(4) }]);
    await insert(ctx(), [
      { id: 'dec_f1', entity: 'ent-f', at: at(1) },
      { id: 'dec_f2', entity: 'ent-f', at: at(3) },
      { id: 'dec_f3', entity: 'ent-f', at: at(5) },
      { id: 'dec_f4', at: at(3), amount: 5000, label: 'fraud' },
      { id: 'dec_f5', at: at(3), amount: 5, label: 'legit' },
    ]);
    const body = { name: 'x', condition: 'in_list("fed", entity_id) || amount > 1000.0', action: 'decline' as const };
    const task: ReplayTask = {
      rule: { id: 'rul_fed', version: 1, body },
      settings: {
        outcomes: { low: 'approve', medium: 'approve', high: 'review', critical: 'decline' },
        signalNames: SIGNAL_NAMES,
        disputePrior: DEFAULT_POLICY.disputePrior,
      },
    };
    const own = await runRuleTest('live', task, { source: storeSource(ctx().store)!, environment: 'live', window: w });
    // Pages of one decision: the page boundaries fall between every pair.
    const fed = await runRuleTest('live', task, {
      entries: () => listHistoryRows(db, 'live', ['fed']),
      pages: replayPages(db, 'live', w, columnsRead(body), 1),
    });
    assert.equal(own.matched, 2);
    assert.deepEqual(fed, own);
  });

  test("a client's rule test, variables and stats read only its own decisions (an admin's read every client's)", async () => {
    const w = windowOf(7);
    const mine = await ctx().client(['rules:read']);
    const tokenOf = async (c: { id: string; secret: string }) =>
      (
        await ctx().inject({
          method: 'POST',
          url: '/api/v1/auth/token',
          payload: { client_id: c.id, client_secret: c.secret },
        })
      ).json().access_token as string;
    const own = await tokenOf(mine);
    await insert(ctx(), [
      { id: 'dec_own1', at: w.since + HOUR, amount: 1500, owner: mine.id, entity: 'ent-own' },
      { id: 'dec_other1', at: w.since + 2 * HOUR, amount: 1600, entity: 'ent-theirs' },
      { id: 'dec_other2', at: w.since + 3 * HOUR, amount: 1700, entity: 'ent-theirs' },
    ]);
    const rule = {
      rule: { name: 'big', condition: 'amount > 1000.0', action: 'hold' },
      since: iso(w.since),
      until: iso(w.until),
    };
    const asClient = (await post('/api/v1/rules/test', rule, own)).json();
    assert.equal(asClient.decisions, 1);
    assert.deepEqual(
      asClient.examples.map((e: { decision_id: string }) => e.decision_id),
      ['dec_own1'],
    );
    const asAdmin = (await post('/api/v1/rules/test', rule)).json();
    assert.equal(asAdmin.decisions, 3);
    const variables = (
      await ctx().inject({ method: 'GET', url: '/api/v1/rules/variables', headers: bearer(own) })
    ).json().data as Array<{ name: string; example?: unknown }>;
    const entityId = variables.find((v) => v.name === 'entity_id');
    assert.ok(entityId?.example === undefined || entityId.example === 'ent-own', JSON.stringify(entityId));
    await insert(ctx(), [
      { id: 'dec_own_recent', at: now - HOUR, owner: mine.id },
      { id: 'dec_other_recent', at: now - HOUR },
    ]);
    const stats = await ctx().inject({ method: 'GET', url: '/api/v1/rules/stats?days=2', headers: bearer(own) });
    assert.equal(stats.statusCode, 200, stats.body);
    const scored = (stats.json().scored as Array<{ decisions: number }>).reduce((n, d) => n + d.decisions, 0);
    assert.equal(scored, 1, 'the stats count only its own decisions');
  });
});
