// The worker thread of fits and backtests (issue 18): the same results as in process, errors that
// keep their kind across the thread boundary, and a failed worker never reused.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_POLICY, SIGNAL_NAMES } from '../../src/model/policy.ts';
import { backtest } from '../../src/policies/backtest.ts';
import { InsufficientLabelsError } from '../../src/policies/fit.ts';
import { runJob } from '../../src/policies/job-thread.ts';
import { FEATURE_SET } from '../../src/model/feature-vector.ts';
import type { BacktestOutput, WireDecision } from '../../src/policies/job-tasks.ts';

const LEVELS = ['low', 'medium', 'high', 'critical'] as const;

function decisions(count: number): WireDecision[] {
  return Array.from({ length: count }, (_, i) => ({
    subject_id: `e${i % 37}`,
    created_at: i,
    features: JSON.stringify(Object.fromEntries(SIGNAL_NAMES.map((n, j) => [n, ((i * 7 + j * 13) % 101) / 100]))),
    feature_set: FEATURE_SET,
    trade_id: null,
    risk_level: LEVELS[i % 4]!,
    label: i % 3 === 0 ? 'fraud' : i % 3 === 1 ? 'legit' : null,
    shadow_version: i % 2 === 0 ? DEFAULT_POLICY.version : null,
    shadow_score: i % 2 === 0 ? i % 100 : null,
    policy_version: i % 5 === 0 ? 'older' : DEFAULT_POLICY.version,
  }));
}

async function* pages(rows: WireDecision[], size: number): AsyncGenerator<WireDecision[]> {
  for (let i = 0; i < rows.length; i += size) yield rows.slice(i, i + size);
}

describe('policy job thread', () => {
  test("a backtest fed in pages equals the in-process replay, with the shadow policy's live figures", async () => {
    const rows = decisions(1_000);
    const result = await runJob<BacktestOutput>({ kind: 'backtest', policy: DEFAULT_POLICY }, pages(rows, 64));
    const { live, deciding, ...replayed } = result;
    assert.deepEqual(deciding, [DEFAULT_POLICY.version, 'older'].sort());
    const label = (r: WireDecision) => (r.label === 'fraud' ? 1 : r.label === 'legit' ? 0 : null);
    assert.deepEqual(
      replayed,
      backtest(
        DEFAULT_POLICY,
        rows.map((r) => ({ features: JSON.parse(r.features), label: label(r), riskLevel: r.risk_level as 'low' })),
      ),
    );
    assert.equal(live?.decisions, 500);
    assert.equal(live?.labelled, rows.filter((r) => r.shadow_version !== null && label(r) !== null).length);
  });

  test("too few labels: the fit's InsufficientLabelsError crosses the thread with its counts; the worker serves the next job", async () => {
    const rows = decisions(20);
    const fit = {
      kind: 'fit' as const,
      base: DEFAULT_POLICY,
      version: 'fit-x',
      now: 1e13,
      assumeLegitAfterDays: 60,
      holdoutFraction: 0.3,
    };
    await assert.rejects(
      runJob(fit, pages(rows, 8)),
      (err: unknown) => err instanceof InsufficientLabelsError && err.fraud === 7 && err.legit === 7,
    );
    assert.equal(
      (await runJob<BacktestOutput>({ kind: 'backtest', policy: DEFAULT_POLICY }, pages(rows, 8))).decisions,
      20,
    );
  });

  test('a page the worker cannot read fails the job, and the next job gets a sound worker', async () => {
    const bad = [...decisions(3), { ...decisions(1)[0]!, features: '{not json' }];
    await assert.rejects(runJob({ kind: 'backtest', policy: DEFAULT_POLICY }, pages(bad, 2)), /policy job: .*JSON/);
    assert.equal(
      (await runJob<BacktestOutput>({ kind: 'backtest', policy: DEFAULT_POLICY }, pages(decisions(5), 2))).decisions,
      5,
    );
  });

  test('a failing store read ends the job and its worker', async () => {
    async function* failing(): AsyncGenerator<WireDecision[]> {
      yield decisions(2);
      throw new Error('the store went away');
    }
    await assert.rejects(runJob({ kind: 'backtest', policy: DEFAULT_POLICY }, failing()), /the store went away/);
    assert.equal(
      (await runJob<BacktestOutput>({ kind: 'backtest', policy: DEFAULT_POLICY }, pages(decisions(3), 2))).decisions,
      3,
    );
  });
});
