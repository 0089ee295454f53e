// At most one fit or backtest per environment at a time, across every instance and worker process
// (issue 18): a job reads every decision of the environment, so two at once double the work and
// the memory. The lease is a row of policy_jobs keyed by the environment (migration 011):
// inserting it is the claim, its holder refreshes heartbeat_at while it runs, and a row whose
// heartbeat went stale (its instance died mid-job) may be taken over. The row also carries the
// job's progress (migration 021), written with the heartbeat, so any instance can show it. The
// statements are job-repository.ts's.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Environment } from '../lib/principal.ts';
import { Conflict } from '../lib/domain-errors.ts';
import type { Database } from '../store/schema.ts';
import { awaitTurn, checkTurn, endTurn, type Claimant } from './job-turns.ts';
import { beatJob, deleteJob, insertJob, jobHolder, takeOverJob } from './job-repository.ts';

export type JobKind = 'fit' | 'backtest';

export type JobPhase = 'reading' | 'fitting' | 'reporting';

/** How far a job has got; `total` is the number of decisions it will read, once counted. */
export interface JobProgress {
  phase: JobPhase;
  decisionsRead: number;
  labelled: number;
  total: number | null;
}

const progressColumns = (p: JobProgress, now: number) => ({
  phase: p.phase,
  decisions_read: p.decisionsRead,
  labelled: p.labelled,
  total: p.total,
  updated_at: now,
});
const START: JobProgress = { phase: 'reading', decisionsRead: 0, labelled: 0, total: null };

/** Another job holds the environment's lease. Maps to 409 conflict naming that job. */
// One fit or backtest per environment at a time (docs/decisions.md): the problem names the running job.
export class JobConflictError extends Conflict {
  constructor(readonly running: { id: string; kind: string }) {
    super(
      `A ${running.kind} (job ${running.id}) is already running in this environment; try again when it has finished.`,
      { extensions: { job: running } },
    );
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
  /**
   * Records the job's progress. It reaches the row with the next heartbeat, or at once when the
   * phase changes or when it is the first report of decisions read (so a client polling early sees
   * a rate); the promise settles when that write has.
   */
  progress(p: JobProgress): Promise<void>;
}

const newJobId = (): string => `job_${randomBytes(8).toString('hex')}`;

/**
 * Claims the environment's lease, or throws JobConflictError naming the job that holds it. With a
 * `claimant` (an API caller) the slot is shared fairly (job-turns.ts): a free slot that is another
 * waiting client's turn throws JobTurnError, and a claimant refused takes the next turn.
 */
export async function acquireLease(
  store: Kysely<Database>,
  environment: Environment,
  kind: JobKind,
  now = Date.now(),
  staleAfterMs = DEFAULT_LEASE.staleAfterMs,
  claimant?: Claimant,
): Promise<string> {
  if (!claimant) return claimLease(store, environment, kind, now, staleAfterMs);
  await checkTurn(store, environment, claimant, now);
  try {
    const id = await claimLease(store, environment, kind, now, staleAfterMs);
    await endTurn(store, environment, claimant);
    return id;
  } catch (err) {
    if (err instanceof JobConflictError) await awaitTurn(store, environment, claimant, now);
    throw err;
  }
}

async function claimLease(
  store: Kysely<Database>,
  environment: Environment,
  kind: JobKind,
  now: number,
  staleAfterMs: number,
): Promise<string> {
  const id = newJobId();
  // Each pass either claims the row or sees who holds it; a pass fails only when another claimant
  // moved the row between its two statements, so a few passes settle any race.
  for (let attempt = 0; attempt < 3; attempt++) {
    const job = { job_id: id, kind, started_at: now, heartbeat_at: now, ...progressColumns(START, now) };
    if (await insertJob(store, environment, job)) return id;
    const current = await jobHolder(store, environment);
    if (!current) continue;
    if (current.heartbeat_at >= now - staleAfterMs)
      throw new JobConflictError({ id: current.job_id, kind: current.kind });
    // Conditional on the stale row itself: of two instances taking over at once, one wins.
    if (await takeOverJob(store, environment, current, job)) return id;
  }
  const current = await jobHolder(store, environment);
  throw new JobConflictError({ id: current?.job_id ?? 'unknown', kind: current?.kind ?? 'job' });
}

/** Refreshes the lease, and the progress when given; false when it is no longer this job's (it was taken over). */
export async function renewLease(
  store: Kysely<Database>,
  environment: Environment,
  id: string,
  now = Date.now(),
  progress?: JobProgress,
): Promise<boolean> {
  return beatJob(store, environment, id, { heartbeat_at: now, ...(progress ? progressColumns(progress, now) : {}) });
}

export async function releaseLease(store: Kysely<Database>, environment: Environment, id: string): Promise<void> {
  await deleteJob(store, environment, id);
}

/** The job holding the environment's lease, if any (for tests and operators). */
export async function runningJob(
  store: Kysely<Database>,
  environment: Environment,
): Promise<{ id: string; kind: string; startedAt: number } | undefined> {
  const row = await jobHolder(store, environment);
  return row ? { id: row.job_id, kind: row.kind, startedAt: row.started_at } : undefined;
}

export interface JobStatus extends JobProgress {
  id: string;
  kind: string;
  startedAt: number;
  updatedAt: number;
}

/**
 * The environment's running job and its progress as last written; none when no job holds the
 * lease or its holder stopped beating (a dead instance's job is not running, whatever its row says).
 */
export async function jobStatus(
  store: Kysely<Database>,
  environment: Environment,
  now = Date.now(),
  staleAfterMs = DEFAULT_LEASE.staleAfterMs,
): Promise<JobStatus | undefined> {
  const row = await jobHolder(store, environment);
  if (!row || row.heartbeat_at < now - staleAfterMs) return undefined;
  return {
    id: row.job_id,
    kind: row.kind,
    startedAt: row.started_at,
    updatedAt: row.updated_at ?? row.heartbeat_at,
    phase: row.phase as JobPhase,
    decisionsRead: row.decisions_read,
    labelled: row.labelled,
    total: row.total,
  };
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
  claimant?: Claimant,
): Promise<T> {
  const id = await acquireLease(db, environment, kind, Date.now(), settings.staleAfterMs, claimant);
  const lost = new AbortController();
  let latest: JobProgress = START;
  let written: JobProgress = START;
  // One write at a time, in order: a heartbeat never overwrites a newer progress with an older one.
  let writes: Promise<unknown> = Promise.resolve();
  const renew = (progress: JobProgress): Promise<boolean> => {
    const write = writes.then(() => renewLease(db, environment, id, Date.now(), progress));
    writes = write.catch(() => {});
    written = progress;
    return write;
  };
  const beat = setInterval(() => {
    renew(latest)
      .then(async (held) => {
        if (held || lost.signal.aborted) return;
        const now = await jobHolder(db, environment);
        lost.abort(new JobConflictError({ id: now?.job_id ?? 'unknown', kind: now?.kind ?? 'job' }));
        // A failed heartbeat is retried at the next beat; only a lease seen taken ends the job.
      })
      .catch(() => {});
  }, settings.heartbeatMs);
  const progress = (p: JobProgress): Promise<void> => {
    latest = p;
    const now =
      p.phase !== written.phase ||
      (written.decisionsRead === 0 && p.decisionsRead > 0) ||
      (written.total === null && p.total !== null);
    // A failed write is left to the next heartbeat, like a failed heartbeat.
    return now
      ? renew(p).then(
          () => {},
          () => {},
        )
      : Promise.resolve();
  };
  try {
    return await work({ id, kind, environment, signal: lost.signal, progress });
  } finally {
    clearInterval(beat);
    await writes;
    await releaseLease(db, environment, id).catch(() => {
      // The row then goes stale and the next job takes it over.
    });
  }
}
