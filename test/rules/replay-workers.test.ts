// docs/rules.md, "Testing a rule": a test's window is cut into slices that two workers take in
// turn, each over a connection of its own; on both stores the result is the one a single worker
// reading the whole window gives, and the one the serving thread's fed pages give.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../helpers/app.ts';
import { storeSource } from '../../src/store/readers.ts';
import { runRuleTest, type ReplayTask } from '../../src/rules/replay-thread.ts';
import { SIGNAL_NAMES, DEFAULT_POLICY } from '../../src/model/policy.ts';
import { replayPages } from '../../src/rules/replay-store.ts';
import { listHistoryRows } from '../../src/rules/list-history-repository.ts';
import { columnsRead } from '../../src/rules/replay-columns.ts';
import { listWithHistory } from './list-history.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const CURRENCIES = ['USDT', 'EUR', 'BTC'];

describeEachBackend('a rule test split between workers', (ctx) => {
  test('two workers taking slices of the window give what one worker and the fed pages give', async () => {
    const since = Date.now() - 400 * DAY;
    const until = since + 20 * DAY;
    const db = ctx().store.db;
    await listWithHistory(db, 'split', since, [
      { value: 'ent-s1', addedAt: since + 3 * DAY, expiresAt: since + 9 * DAY },
    ]);
    // 90 decisions over the window, several at the same millisecond (the keyset's tie on id)
    const rows = Array.from({ length: 90 }, (_, i) => {
      const amount = ((i * 37) % 50) * 40 + 0.25;
      return {
        environment: 'live' as const,
        id: `dec_s${String(i).padStart(3, '0')}`,
        kind: 'score',
        principal_id: 'p',
        owner_client_id: 'c',
        subject_id: `ent-s${i % 3}`,
        request_digest: 'd',
        policy_version: 'v1',
        created_at: since + Math.floor(i / 3) * (DAY / 2) + 1,
        cache_key: null,
        cache_state: null,
        result: JSON.stringify({ entity_id: 'x', score: i % 100, risk_level: 'low', signals: [], safe_amount: 500 }),
        request: JSON.stringify({ amount, currency: CURRENCIES[i % 3], payment_method: 'card' }),
        features: JSON.stringify({ velocity_trades: i % 4 }),
        feature_set: 3,
        risk_level: i % 5 === 0 ? 'critical' : 'low',
        outcome: i % 5 === 0 ? 'decline' : 'approve',
        label: i % 7 === 0 ? 'fraud' : i % 11 === 0 ? 'legit' : null,
        label_source: i % 7 === 0 || i % 11 === 0 ? 'api' : null,
        rule_inputs:
          i % 10 === 0
            ? null
            : JSON.stringify({
                amount_ref: amount / 100,
                context: { payment_method: 'card' },
                entity: {},
                safe_amount: 500,
              }),
      };
    });
    await db.insertInto('decisions').values(rows).execute();
    const body = {
      name: 'x',
      condition: 'in_list("split", entity_id) || amount > 1200.0 || signals.velocity_trades > 2.0',
      action: 'review' as const,
    };
    const task: ReplayTask = {
      rule: { id: 'rul_split', version: 1, body },
      settings: {
        outcomes: { low: 'approve', medium: 'approve', high: 'review', critical: 'decline' },
        signalNames: SIGNAL_NAMES,
        disputePrior: DEFAULT_POLICY.disputePrior,
      },
    };
    const input = { source: storeSource(ctx().store)!, environment: 'live' as const, window: { since, until } };
    const two = await runRuleTest('live', task, input, { workers: 2 });
    const one = await runRuleTest('live', task, input, { workers: 1 });
    const fed = await runRuleTest('live', task, {
      entries: () => listHistoryRows(db, 'live', ['split']),
      pages: replayPages(db, 'live', { since, until }, columnsRead(body), 7),
    });
    assert.equal(two.decisions, 90);
    assert.ok(two.matched > 20 && two.matched < 90, String(two.matched));
    assert.deepEqual(two, one);
    assert.deepEqual(two, fed);
    // the most recent matches, newest first: by time, then id
    const matchedIds = two.examples.map((e) => e.decision_id);
    assert.deepEqual(matchedIds, [...matchedIds].sort().reverse());
    assert.equal(matchedIds[0], 'dec_s089');
  });
});
