// At most one fit or backtest per environment at a time, across every instance and worker process
// (issue 18): each holds every decision it reads until the streaming rewrite lands, so two at once
// double the memory and the work. The lease is a row of policy_jobs keyed by the environment
// (migration 011): inserting it is the claim, its holder refreshes heartbeat_at while it runs, and
// a row whose heartbeat went stale (its instance died mid-job) may be taken over.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Environment } from '../auth/principal.ts';
import type { Database } from '../store/schema.ts';

export type JobKind = 'fit' | 'backtest';

interface PolicyJobsTable {
  environment: string;
  job_id: string;
  kind: string;
  started_at: number;
  heartbeat_at: number;
}

type JobsDb = Kysely<Database & { policy_jobs: PolicyJobsTable }>;
const jobsDb = (db: Kysely<Database>): JobsDb => db.withTables<{ policy_jobs: PolicyJobsTable }>();

/** Another job holds the environment's lease. Maps to 409 conflict naming that job. */
export class JobConflictError extends Error {
  readonly code = 'conflict';
  constructor(readonly running: { id: string; kind: string }) {
    super(`A ${running.kind} (job ${running.id}) is already running in this environment; try again when it has finished.`);
    this.name = 'JobConflictError';
  }
}

export interface LeaseSettings {
  /** how often a running job refreshes its heartbeat */
  heartbeatMs: number;
  /** a lease whose heartbeat is older than this belongs to a dead instance and may be taken over */
  staleAfterMs: number;
}

// Six missed heartbeats before a takeover: a busy instance is never mistaken for a dead one, and a
// crashed one blocks its environment's jobs for half a minute at most.
export const DEFAULT_LEASE: LeaseSettings = { heartbeatMs: 5_000, staleAfterMs: 30_000 };

export interface Job {
  id: string;
  kind: JobKind;
  environment: Environment;
  /** aborted when the lease was lost (taken over by another instance): the job must stop */
  signal: AbortSignal;
}

const newJobId = (): string => `job_${randomBytes(8).toString('hex')}`;

async function holder(db: JobsDb, environment: Environment): Promise<PolicyJobsTable | undefined> {
  const row = await db.selectFrom('policy_jobs').selectAll().where('environment', '=', environment).executeTakeFirst();
  return row ? { ...row, started_at: Number(row.started_at), heartbeat_at: Number(row.heartbeat_at) } : undefined;
}

/** Claims the environment's lease, or throws JobConflictError naming the job that holds it. */
export async function acquireLease(store: Kysely<Database>, environment: Environment, kind: JobKind, now = Date.now(), staleAfterMs = DEFAULT_LEASE.staleAfterMs): Promise<string> {
  const db = jobsDb(store);
  const id = newJobId();
  // Each pass either claims the row or sees who holds it; a pass fails only when another claimant
  // moved the row between its two statements, so a few passes settle any race.
  for (let attempt = 0; attempt < 3; attempt++) {
    const inserted = await db.insertInto('policy_jobs')
      .values({ environment, job_id: id, kind, started_at: now, heartbeat_at: now })
      .onConflict((oc) => oc.column('environment').doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return id;
    const current = await holder(db, environment);
    if (!current) continue;
    if (current.heartbeat_at >= now - staleAfterMs) throw new JobConflictError({ id: current.job_id, kind: current.kind });
    // Conditional on the stale row itself: of two instances taking over at once, one wins.
    const taken = await db.updateTable('policy_jobs')
      .set({ job_id: id, kind, started_at: now, heartbeat_at: now })
      .where('environment', '=', environment).where('job_id', '=', current.job_id).where('heartbeat_at', '=', current.heartbeat_at)
      .executeTakeFirst();
    if (Number(taken.numUpdatedRows) > 0) return id;
  }
  const current = await holder(db, environment);
  throw new JobConflictError({ id: current?.job_id ?? 'unknown', kind: current?.kind ?? 'job' });
}

/** Refreshes the lease; false when it is no longer this job's (it was taken over). */
export async function renewLease(store: Kysely<Database>, environment: Environment, id: string, now = Date.now()): Promise<boolean> {
  const result = await jobsDb(store).updateTable('policy_jobs').set({ heartbeat_at: now })
    .where('environment', '=', environment).where('job_id', '=', id).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function releaseLease(store: Kysely<Database>, environment: Environment, id: string): Promise<void> {
  await jobsDb(store).deleteFrom('policy_jobs').where('environment', '=', environment).where('job_id', '=', id).execute();
}

/** The job holding the environment's lease, if any (for tests and operators). */
export async function runningJob(store: Kysely<Database>, environment: Environment): Promise<{ id: string; kind: string; startedAt: number } | undefined> {
  const row = await holder(jobsDb(store), environment);
  return row ? { id: row.job_id, kind: row.kind, startedAt: row.started_at } : undefined;
}

/**
 * Runs `work` holding the environment's lease: heartbeats while it runs, aborts `job.signal` if the
 * lease is lost, and releases the lease however the work ends.
 */
export async function withLease<T>(
  db: Kysely<Database>,
  environment: Environment,
  kind: JobKind,
  work: (job: Job) => Promise<T>,
  settings: LeaseSettings = DEFAULT_LEASE,
): Promise<T> {
  const id = await acquireLease(db, environment, kind, Date.now(), settings.staleAfterMs);
  const lost = new AbortController();
  const beat = setInterval(() => {
    renewLease(db, environment, id).then(async (held) => {
      if (held || lost.signal.aborted) return;
      const now = await holder(jobsDb(db), environment);
      lost.abort(new JobConflictError({ id: now?.job_id ?? 'unknown', kind: now?.kind ?? 'job' }));
    // A failed heartbeat is retried at the next beat; only a lease seen taken ends the job.
    }).catch(() => {});
  }, settings.heartbeatMs);
  try {
    return await work({ id, kind, environment, signal: lost.signal });
  } finally {
    clearInterval(beat);
    await releaseLease(db, environment, id).catch(() => {
      // The row then goes stale and the next job takes it over.
    });
  }
}
