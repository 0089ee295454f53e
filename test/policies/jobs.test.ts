// Issue 18 item 6: fits and backtests run one per environment at a time across instances (a second
// gets 409 naming the running job), in a worker thread fed the store a page at a time, with the
// same results as the in-process replay and fit.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { backends, problem, ADMIN_ID, type TestStore } from '../helpers/app.ts';
import { type Store } from '../../src/store/db.ts';
import { twoInstances, type TwoInstances } from '../helpers/instances.ts';
import { DEFAULT_POLICY, SIGNAL_NAMES } from '../../src/model/policy.ts';
import { decodeFeatures, FEATURE_SET } from '../../src/model/feature-vector.ts';
import { backtest } from '../../src/policies/backtest.ts';
import { fitCandidate, type LabelledDecision } from '../../src/policies/report.ts';
import { holdNextJob } from '../../src/policies/job-thread.ts';
import { DEFAULT_LEASE, runningJob } from '../../src/policies/jobs.ts';
import type { Environment } from '../../src/lib/principal.ts';

const DAY = 86_400_000;
// Old enough that every unlabelled decision with a completed trade counts as legit (60 days).
const SEEDED_AT = Date.now() - 200 * DAY;
const LIVE_DECISIONS = 5_000; // three pages of the store reader
const TEST_DECISIONS = 40;

/** A deterministic pseudo-random stream (an LCG): the seeded store is the same at every run. */
function stream(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/**
 * Score decisions with stored features, a third labelled (fraud where chargebacks is high, with
 * noise), some unlabelled ones whose trade later completed (they count as legit in a fit), and
 * several per timestamp so the reader's keyset paging meets ties.
 */
async function seed(store: Store, environment: Environment, count: number): Promise<void> {
  const next = stream(environment === 'live' ? 18 : 6);
  const decisions = [];
  const events = [];
  for (let i = 0; i < count; i++) {
    const features = Object.fromEntries(SIGNAL_NAMES.map((n) => [n, Math.round(next() * 1e6) / 1e6]));
    const risky = features.chargebacks! + 0.3 * next() > 0.8;
    const subject = `${environment}-entity-${i % 1_700}`;
    const tradeId = i % 2 === 0 ? `trade-${i}` : null;
    const label = i % 3 === 0 ? (risky ? 'fraud' : 'legit') : null;
    decisions.push({
      environment,
      id: `${environment}-d-${String(i).padStart(6, '0')}`,
      kind: 'score',
      principal_id: 'seed',
      owner_client_id: ADMIN_ID,
      subject_id: subject,
      request_digest: 'seed',
      result: '{}',
      policy_version: DEFAULT_POLICY.version,
      created_at: SEEDED_AT + Math.floor(i / 4) * 1_000,
      cache_key: null,
      cache_state: null,
      features: JSON.stringify(features),
      feature_set: FEATURE_SET,
      trade_id: tradeId,
      risk_level: (['low', 'medium', 'high', 'critical'] as const)[i % 4],
      label,
      label_source: label ? 'api' : null,
    });
    if (label === null && tradeId !== null && i % 5 === 0) {
      events.push({
        environment,
        client_id: '',
        event_id: `ev-${environment}-${i}`,
        entity_id: subject,
        type: 'trade.completed',
        occurred_at: SEEDED_AT,
        payload: JSON.stringify({ trade_id: tradeId }),
        ingested_at: SEEDED_AT,
      });
    }
  }
  for (let i = 0; i < decisions.length; i += 500)
    await store.db
      .insertInto('decisions')
      .values(decisions.slice(i, i + 500))
      .execute();
  for (let i = 0; i < events.length; i += 500)
    await store.db
      .insertInto('events')
      .values(events.slice(i, i + 500))
      .execute();
}

/** The stored decisions in the reader's order, as the in-process replay and fit take them. */
async function stored(store: Store, environment: Environment) {
  return store.db
    .selectFrom('decisions')
    .select(['subject_id', 'features', 'label', 'risk_level', 'trade_id'])
    .where('environment', '=', environment)
    .where('kind', '=', 'score')
    .where('features', 'is not', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

const expectedBacktest = async (store: Store, environment: Environment) =>
  backtest(
    DEFAULT_POLICY,
    (await stored(store, environment)).map((r) => ({
      features: decodeFeatures(r.features!),
      label: r.label === 'fraud' ? 1 : r.label === 'legit' ? 0 : null,
      riskLevel: r.risk_level as 'low',
    })),
  );

for (const backend of backends()) {
  describe(`policy jobs: one per environment, off the event loop [${backend}]`, () => {
    let world: TwoInstances;
    let fresh: TestStore;
    let a: FastifyInstance;
    let b: FastifyInstance;
    const key: Record<'reader' | 'operator' | 'testReader', string> = { reader: '', operator: '', testReader: '' };
    const post = (app: FastifyInstance, apiKey: string, url: string, payload: Record<string, unknown> = {}) =>
      app.inject({ method: 'POST', url, headers: { 'x-api-key': apiKey }, payload });
    const backtestUrl = `/api/v1/policies/${DEFAULT_POLICY.version}/backtest`;

    before(async () => {
      // Two instances over one store, each with its own connection.
      world = await twoInstances(backend);
      ({ fresh, a, b } = world);
      // Backtests are an operator's (docs/api.md, "Scopes and roles"): the readers are operators with policy:read only.
      key.reader = await world.key('jobs-live-reader', 'live', 'operator', ['policy:read']);
      key.testReader = await world.key('jobs-test-reader', 'test', 'operator', ['policy:read']);
      key.operator = await world.key('jobs-live-operator', 'live', 'operator', ['policy:read', 'policy:write']);
      await seed(fresh.store, 'live', LIVE_DECISIONS);
      await seed(fresh.store, 'test', TEST_DECISIONS);
    });
    after(() => world?.close());

    test('mid-backtest: /healthz answers, a second job in the environment gets 409 naming the first on either instance, the other environment runs; the result equals the in-process replay', async () => {
      const hold = holdNextJob();
      let settled = false;
      const first = post(a, key.reader, backtestUrl).finally(() => (settled = true));
      // The worker has folded in the first page and is stopped inside the job, synchronously.
      await hold.reached;
      const running = await runningJob(fresh.store.db, 'live');
      assert.ok(running, 'the lease row names the running job');
      assert.equal(running.kind, 'backtest');

      const health = await a.inject({ method: 'GET', url: '/healthz' });
      assert.equal(health.statusCode, 200, 'the instance running the job answers its health check');
      assert.equal(settled, false, 'while the backtest is still running');

      const conflicts: [string, LightMyRequestResponse][] = [
        ['same instance, backtest', await post(a, key.reader, backtestUrl)],
        ['other instance, backtest', await post(b, key.reader, backtestUrl)],
        ['other instance, fit', await post(b, key.operator, '/api/v1/policies/fit')],
      ];
      for (const [what, res] of conflicts) {
        const body = problem(res, 409, 'conflict');
        assert.ok(
          String(body.detail).includes(running.id),
          `${what}: the detail names ${running.id}: ${String(body.detail)}`,
        );
      }

      const other = await post(b, key.testReader, backtestUrl);
      assert.equal(other.statusCode, 200, `the test environment is not blocked: ${other.body}`);
      assert.equal(other.json().decisions, TEST_DECISIONS);
      assert.equal(settled, false, 'the live backtest is still held');

      hold.release();
      const done = await first;
      assert.equal(done.statusCode, 200, done.body);
      const expected = await expectedBacktest(fresh.store, 'live');
      assert.equal(done.json().decisions, LIVE_DECISIONS);
      const { version, approximate, ...replayed } = done.json() as Record<string, unknown>;
      assert.equal(version, DEFAULT_POLICY.version);
      assert.deepEqual(approximate, [], 'every decision was made by a policy with the same value settings');
      assert.deepEqual(replayed, JSON.parse(JSON.stringify(expected)));
      assert.equal(await runningJob(fresh.store.db, 'live'), undefined, 'the lease is released');
      assert.equal((await post(b, key.reader, backtestUrl)).statusCode, 200, 'and the next job runs');
    });

    test('a lease whose heartbeat went stale (its instance died) is taken over; a fresh one is not', async () => {
      const jobs = fresh.store.db.withTables<{
        policy_jobs: { environment: string; job_id: string; kind: string; started_at: number; heartbeat_at: number };
      }>();
      const now = Date.now();
      await jobs
        .insertInto('policy_jobs')
        .values({ environment: 'live', job_id: 'job_elsewhere', kind: 'fit', started_at: now, heartbeat_at: now })
        .execute();
      const body = problem(await post(a, key.reader, backtestUrl), 409, 'conflict');
      assert.match(String(body.detail), /job_elsewhere/);
      assert.match(String(body.detail), /\bfit\b/);
      await jobs
        .updateTable('policy_jobs')
        .set({ heartbeat_at: now - DEFAULT_LEASE.staleAfterMs - 1_000 })
        .where('environment', '=', 'live')
        .execute();
      const res = await post(a, key.reader, backtestUrl);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(await runningJob(fresh.store.db, 'live'), undefined, "the dead job's row went with the takeover");
    });

    test('a fit through the worker equals the in-process fit over the same labelled decisions (labels and completed trades)', async () => {
      const res = await post(b, key.operator, '/api/v1/policies/fit', { holdout_fraction: 0.3 });
      assert.equal(res.statusCode, 201, res.body);
      const completed = new Set(
        (
          await fresh.store.db
            .selectFrom('events')
            .select(['entity_id', 'payload'])
            .where('environment', '=', 'live')
            .where('type', '=', 'trade.completed')
            .execute()
        ).map((e) => `${e.entity_id}\0${(JSON.parse(e.payload) as { trade_id: string }).trade_id}`),
      );
      const labelled: LabelledDecision[] = [];
      for (const r of await stored(fresh.store, 'live')) {
        const label =
          r.label === 'fraud'
            ? 1
            : r.label === 'legit'
              ? 0
              : r.trade_id && completed.has(`${r.subject_id}\0${r.trade_id}`)
                ? 0
                : null;
        // The source as the report counts it: this test's labels are the API's; the rest legit assumed from a completed
        // trade.
        const source = r.label ? ('api' as const) : ('assumed' as const);
        if (label !== null)
          labelled.push({ entityId: r.subject_id, features: decodeFeatures(r.features!), label, source });
      }
      assert.ok(labelled.length > LIVE_DECISIONS / 3, 'completed trades added legit labels');
      const { policy, report } = fitCandidate(labelled, DEFAULT_POLICY, {
        version: res.json().version,
        holdoutFraction: 0.3,
      });
      assert.deepEqual(res.json().document, policy);
      const { holdout_fraction: fraction, plots, ...figures } = res.json().report;
      assert.equal(fraction, 0.3);
      assert.ok(plots.base && plots.candidate);
      assert.deepEqual(figures, JSON.parse(JSON.stringify(report)));
    });
  });
}
