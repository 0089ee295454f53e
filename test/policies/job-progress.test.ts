// Issue 20 item 5: a running fit's progress is visible from any instance (GET /api/v1/policy-jobs
// and /jobs/{id}), the 409 of a second job names the running one, and a finished or unknown job
// is 404. The job is held mid-run by holdNextJob (no timing): after its first page of 2,000.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import type { FastifyInstance } from 'fastify';
import { backends, problem, ADMIN_ID, type TestStore } from '../helpers/app.ts';
import { type Store } from '../../src/store/db.ts';
import { twoInstances, type TwoInstances } from '../helpers/instances.ts';
import { DEFAULT_POLICY, SIGNAL_NAMES } from '../../src/model/policy.ts';
import { FEATURE_SET } from '../../src/model/feature-vector.ts';
import { holdNextJob } from '../../src/policies/job-thread.ts';
import { acquireLease, jobStatus, renewLease } from '../../src/policies/jobs.ts';
import type { Environment } from '../../src/lib/principal.ts';
import { sql } from 'kysely';
import { storeMigratedBefore } from '../helpers/migrations.ts';
import { VOUCH } from '../helpers/vouch-command.ts';

const DECISIONS = 4_500; // three pages of the reader: the hold comes after the first
const AT = Date.UTC(2026, 0, 1);

/** Score decisions with stored features, every other one labelled (fraud where chargebacks is high). */
async function seedLabelled(store: Store, environment: Environment, count: number): Promise<void> {
  let s = 7;
  const next = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const rows = [];
  for (let i = 0; i < count; i++) {
    const features = Object.fromEntries(SIGNAL_NAMES.map((n) => [n, Math.round(next() * 1e4) / 1e4]));
    const label = i % 2 === 0 ? (features.chargebacks! + 0.3 * next() > 0.8 ? 'fraud' : 'legit') : null;
    rows.push({
      environment,
      id: `${environment}-p-${String(i).padStart(6, '0')}`,
      kind: 'score',
      principal_id: 'seed',
      owner_client_id: ADMIN_ID,
      subject_id: `entity-${i % 900}`,
      request_digest: 'seed',
      result: '{}',
      policy_version: DEFAULT_POLICY.version,
      created_at: AT + i * 1_000,
      cache_key: null,
      cache_state: null,
      features: JSON.stringify(features),
      feature_set: FEATURE_SET,
      trade_id: null,
      risk_level: 'low',
      label,
      label_source: label ? 'api' : null,
      request: JSON.stringify({ amount: 100 + i, currency: 'EUR' }),
    });
  }
  for (let i = 0; i < rows.length; i += 500)
    await store.db
      .insertInto('decisions')
      .values(rows.slice(i, i + 500))
      .execute();
}

for (const backend of backends()) {
  describe(`policy job progress [${backend}]`, () => {
    let world: TwoInstances;
    let fresh: TestStore;
    let a: FastifyInstance;
    let b: FastifyInstance;
    const key = { reader: '', operator: '', testReader: '' };
    const get = (app: FastifyInstance, apiKey: string, url: string) =>
      app.inject({ method: 'GET', url, headers: { 'x-api-key': apiKey } });

    before(async () => {
      world = await twoInstances(backend);
      ({ fresh, a, b } = world);
      key.reader = await world.key('progress-live-service', 'live', 'service', ['policy:read']);
      key.testReader = await world.key('progress-test-service', 'test', 'service', ['policy:read']);
      key.operator = await world.key('progress-live-operator', 'live', 'operator', ['policy:read', 'policy:write']);
      await seedLabelled(fresh.store, 'live', DECISIONS);
    });
    after(() => world?.close());

    test('mid-fit: both instances show the job and its progress; a second job gets 409 naming it; once done it is 404', async () => {
      const idle = await get(b, key.reader, '/api/v1/policy-jobs');
      assert.equal(idle.statusCode, 200, idle.body);
      assert.deepEqual(idle.json(), { data: [] });

      const hold = holdNextJob();
      const fit = a.inject({
        method: 'POST',
        url: '/api/v1/policies/fit',
        headers: { 'x-api-key': key.operator },
        payload: {},
      });
      await hold.reached;

      const listed = await get(b, key.reader, '/api/v1/policy-jobs');
      assert.equal(listed.statusCode, 200, listed.body);
      const [job] = listed.json().data as Record<string, unknown>[];
      assert.ok(job, 'the other instance sees the running job');
      assert.equal(job.kind, 'fit');
      assert.equal(job.phase, 'reading');
      assert.equal(job.decisions_read, 2_000, 'the first page is read and reported');
      assert.equal(job.total, DECISIONS, 'the decisions to read were counted at the start');
      assert.equal(job.fraction, 2_000 / DECISIONS);
      assert.equal(job.labelled, 1_000, 'every other decision of the first page is labelled');
      assert.ok(Date.parse(String(job.started_at)) <= Date.parse(String(job.updated_at)));

      const one = await get(a, key.reader, `/api/v1/policy-jobs/${String(job.id)}`);
      assert.equal(one.statusCode, 200, one.body);
      assert.deepEqual(one.json(), job);
      assert.deepEqual(
        (await get(a, key.testReader, '/api/v1/policy-jobs')).json(),
        { data: [] },
        'the test environment has no job',
      );
      problem(await get(a, key.testReader, `/api/v1/policy-jobs/${String(job.id)}`), 404, 'not_found');

      // A backtest is an operator's (docs/api.md, "Scopes and roles").
      const conflict = problem(
        await b.inject({
          method: 'POST',
          url: `/api/v1/policies/${DEFAULT_POLICY.version}/backtest`,
          headers: { 'x-api-key': key.operator },
          payload: {},
        }),
        409,
        'conflict',
      );
      assert.deepEqual(conflict.job, { id: job.id, kind: 'fit' }, 'the problem names the running job');

      hold.release();
      const done = await fit;
      assert.equal(done.statusCode, 201, done.body);
      problem(await get(b, key.reader, `/api/v1/policy-jobs/${String(job.id)}`), 404, 'not_found');
      assert.deepEqual((await get(b, key.reader, '/api/v1/policy-jobs')).json(), { data: [] });
    });

    test('vouch policy fit|backtest --progress: the progress on standard error, line by line without a terminal; standard output is the JSON result alone', async () => {
      const vouch = (args: string[]) =>
        new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
          const env = {
            ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VOUCH_'))),
            VOUCH_DATABASE_URL: fresh.url,
          };
          execFile(process.execPath, [...VOUCH, ...args], { env, timeout: 60_000 }, (err, stdout, stderr) =>
            resolve({
              code: err ? (typeof err.code === 'number' ? err.code : 1) : 0,
              stdout: String(stdout),
              stderr: String(stderr),
            }),
          );
        });
      const fit = await vouch(['policy', 'fit', '--progress']);
      assert.equal(fit.code, 0, fit.stderr);
      assert.equal(JSON.parse(fit.stdout).source, 'fit', 'standard output parses as the fitted policy');
      const lines = fit.stderr.trim().split('\n');
      assert.match(lines[0]!, /^fit: \[\.+\] {3}0 % reading 0\/4,500 decisions, 0 labelled$/, 'the count comes first');
      assert.ok(
        lines.some((l) => /^fit: fitting, 4,500 decisions read, 2,250 labelled$/.test(l)),
        fit.stderr,
      );
      assert.ok(
        lines.some((l) => /^fit: reporting, /.test(l)),
        fit.stderr,
      );
      assert.equal(lines[lines.length - 1], 'fit: done, 4,500 decisions read, 2,250 labelled');

      const bt = await vouch(['policy', 'backtest', DEFAULT_POLICY.version, '--progress']);
      assert.equal(bt.code, 0, bt.stderr);
      assert.equal(JSON.parse(bt.stdout).decisions, DECISIONS);
      assert.match(bt.stderr, /^backtest: \[/);
      assert.match(bt.stderr, /\nbacktest: done, 4,500 decisions read, 2,250 labelled\n$/);

      const quiet = await vouch(['policy', 'backtest', DEFAULT_POLICY.version]);
      assert.equal(quiet.stderr, '', 'no bar without --progress when standard error is not a terminal');
    });

    test('an unknown job id is 404; the route needs policy:read', async () => {
      problem(await get(a, key.reader, '/api/v1/policy-jobs/job_0000000000000000'), 404, 'not_found');
      assert.equal((await a.inject({ method: 'GET', url: '/api/v1/policy-jobs' })).statusCode, 401);
    });

    test("the heartbeat writes the progress; a dead holder's job is not shown as running", async () => {
      const now = Date.now();
      const id = await acquireLease(fresh.store.db, 'test', 'backtest', now);
      assert.deepEqual(await jobStatus(fresh.store.db, 'test', now), {
        id,
        kind: 'backtest',
        startedAt: now,
        updatedAt: now,
        phase: 'reading',
        decisionsRead: 0,
        labelled: 0,
        total: null,
      });
      assert.equal(
        await renewLease(fresh.store.db, 'test', id, now + 5_000, {
          phase: 'reporting',
          decisionsRead: 42,
          labelled: 7,
          total: 42,
        }),
        true,
      );
      const status = await jobStatus(fresh.store.db, 'test', now + 5_000);
      assert.deepEqual(status, {
        id,
        kind: 'backtest',
        startedAt: now,
        updatedAt: now + 5_000,
        phase: 'reporting',
        decisionsRead: 42,
        labelled: 7,
        total: 42,
      });
      assert.equal(
        await jobStatus(fresh.store.db, 'test', now + 5_000 + 31_000),
        undefined,
        'stale: its instance stopped beating',
      );
      await fresh.store.db
        .withTables<{ policy_jobs: { environment: string } }>()
        .deleteFrom('policy_jobs')
        .where('environment', '=', 'test')
        .execute();
    });
  });
}

for (const backend of backends()) {
  test(`021_job_progress: a job that held the lease across the upgrade shows as reading, nothing counted yet [${backend}]`, async (t) => {
    const { store, drop } = await storeMigratedBefore(backend, '021');
    t.after(drop);
    const now = Date.now();
    await sql`insert into policy_jobs (environment, job_id, kind, started_at, heartbeat_at) values ('live', 'job_old', 'fit', ${now}, ${now})`.execute(
      store.db,
    );
    await store.migrate();
    assert.deepEqual(await jobStatus(store.db, 'live', now), {
      id: 'job_old',
      kind: 'fit',
      startedAt: now,
      updatedAt: now,
      phase: 'reading',
      decisionsRead: 0,
      labelled: 0,
      total: null,
    });
  });
}
