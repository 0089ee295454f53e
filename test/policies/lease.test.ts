// The job lease of fits and backtests (issue 18; migration 011): one holder per environment, a
// stale holder taken over, a lost lease ends the job, a lease always released.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { backends, freshStore, type TestStore } from '../helpers/app.ts';
import {
  acquireLease,
  DEFAULT_LEASE,
  JobConflictError,
  releaseLease,
  renewLease,
  runningJob,
  withLease,
} from '../../src/policies/jobs.ts';

for (const backend of backends()) {
  describe(`policy job lease [${backend}]`, () => {
    let fresh: TestStore;
    before(async () => {
      fresh = await freshStore(backend);
    });
    after(async () => {
      await fresh?.drop();
    });

    test('one holder per environment; a stale one is taken over and can neither renew nor release the new lease', async () => {
      const db = fresh.store.db;
      const now = Date.now();
      const first = await acquireLease(db, 'live', 'fit', now);
      await assert.rejects(
        acquireLease(db, 'live', 'backtest', now + 1),
        (err: unknown) => err instanceof JobConflictError && err.running.id === first && err.running.kind === 'fit',
      );
      const other = await acquireLease(db, 'test', 'backtest', now);
      assert.notEqual(other, first, 'the other environment has its own lease');
      assert.equal(await renewLease(db, 'live', first, now + 10), true);

      const later = now + 10 + DEFAULT_LEASE.staleAfterMs + 1;
      const taker = await acquireLease(db, 'live', 'backtest', later);
      assert.notEqual(taker, first);
      assert.equal(await renewLease(db, 'live', first, later), false, 'the dead holder has lost it');
      await releaseLease(db, 'live', first);
      assert.equal((await runningJob(db, 'live'))?.id, taker, 'releasing a lost lease leaves the new holder');
      await releaseLease(db, 'live', taker);
      await releaseLease(db, 'test', other);
      assert.equal(await runningJob(db, 'live'), undefined);
    });

    test('of claims racing for a free environment, exactly one wins and the others name it', async () => {
      const results = await Promise.allSettled(
        Array.from({ length: 6 }, () => acquireLease(fresh.store.db, 'live', 'backtest')),
      );
      const won = results.filter((r): r is PromiseFulfilledResult<string> => r.status === 'fulfilled');
      assert.equal(won.length, 1, JSON.stringify(results.map((r) => r.status)));
      for (const r of results) {
        if (r.status === 'rejected')
          assert.ok(r.reason instanceof JobConflictError && r.reason.running.id === won[0]!.value, String(r.reason));
      }
      await releaseLease(fresh.store.db, 'live', won[0]!.value);
    });

    test('a job whose lease is taken over is aborted with a conflict naming the taker; its end leaves the taker in place', async () => {
      const db = fresh.store.db;
      const jobs = db.withTables<{ policy_jobs: { environment: string; job_id: string } }>();
      const run = withLease(
        db,
        'live',
        'fit',
        async (job) => {
          await jobs
            .updateTable('policy_jobs')
            .set({ job_id: 'job_taker' })
            .where('environment', '=', 'live')
            .where('job_id', '=', job.id)
            .execute();
          // The next heartbeat finds the row gone to another job.
          await new Promise((_, reject) =>
            job.signal.addEventListener('abort', () => reject(job.signal.reason as Error)),
          );
        },
        { heartbeatMs: 5, staleAfterMs: DEFAULT_LEASE.staleAfterMs },
      );
      await assert.rejects(run, (err: unknown) => err instanceof JobConflictError && err.running.id === 'job_taker');
      assert.equal((await runningJob(db, 'live'))?.id, 'job_taker');
      await releaseLease(db, 'live', 'job_taker');
    });

    test('the lease is released however the job ends', async () => {
      const db = fresh.store.db;
      await assert.rejects(
        withLease(db, 'live', 'backtest', async () => {
          assert.ok(await runningJob(db, 'live'), 'held while running');
          throw new Error('the job failed');
        }),
        /the job failed/,
      );
      assert.equal(await runningJob(db, 'live'), undefined);
      assert.equal(await withLease(db, 'live', 'backtest', async (job) => job.kind), 'backtest');
      assert.equal(await runningJob(db, 'live'), undefined);
    });
  });
}
