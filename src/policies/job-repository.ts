// The policy_jobs and policy_job_turns tables' one owner (issue 41 item 1): the environment's one
// fit-or-backtest lease, with its heartbeat and progress (jobs.ts), and the turn a refused client
// holds for the slot (job-turns.ts). Every write that claims is conditional, so of two instances
// (or clients) at once exactly one wins.
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';

interface PolicyJobsTable {
  environment: string;
  job_id: string;
  kind: string;
  started_at: number;
  heartbeat_at: number;
  phase: string;
  decisions_read: number;
  labelled: number;
  total: number | null;
  updated_at: number | null;
}

/** The lease row as read: numbers as numbers on both stores. */
type JobRow = PolicyJobsTable;
/** A lease row's columns but its environment: what a claim or a takeover writes. */
type JobColumns = Omit<PolicyJobsTable, 'environment'>;

type JobsDb = Kysely<Database & { policy_jobs: PolicyJobsTable }>;
const jobsDb = (db: Kysely<Database>): JobsDb => db.withTables<{ policy_jobs: PolicyJobsTable }>();

/** The job holding the environment's lease, if any. */
export async function jobHolder(store: Kysely<Database>, environment: Environment): Promise<JobRow | undefined> {
  const db = jobsDb(store);
  const row = await db.selectFrom('policy_jobs').selectAll().where('environment', '=', environment).executeTakeFirst();
  if (!row) return undefined;
  const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return {
    ...row,
    started_at: Number(row.started_at),
    heartbeat_at: Number(row.heartbeat_at),
    decisions_read: Number(row.decisions_read),
    labelled: Number(row.labelled),
    total: num(row.total),
    updated_at: num(row.updated_at),
  };
}

/** Whether the lease was free and is now this job's (a held row is left alone). */
export async function insertJob(store: Kysely<Database>, environment: Environment, job: JobColumns): Promise<boolean> {
  const inserted = await jobsDb(store)
    .insertInto('policy_jobs')
    .values({ environment, ...job })
    .onConflict((oc) => oc.column('environment').doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Whether this job took the lease over from the stale row `from` (conditional on that row itself). */
export async function takeOverJob(
  store: Kysely<Database>,
  environment: Environment,
  from: Pick<JobRow, 'job_id' | 'heartbeat_at'>,
  job: JobColumns,
): Promise<boolean> {
  const taken = await jobsDb(store)
    .updateTable('policy_jobs')
    .set(job)
    .where('environment', '=', environment)
    .where('job_id', '=', from.job_id)
    .where('heartbeat_at', '=', from.heartbeat_at)
    .executeTakeFirst();
  return Number(taken.numUpdatedRows) > 0;
}

/** Writes the job's heartbeat (and progress columns); false when the lease is no longer its. */
export async function beatJob(
  store: Kysely<Database>,
  environment: Environment,
  id: string,
  columns: Partial<JobColumns>,
): Promise<boolean> {
  const result = await jobsDb(store)
    .updateTable('policy_jobs')
    .set(columns)
    .where('environment', '=', environment)
    .where('job_id', '=', id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteJob(store: Kysely<Database>, environment: Environment, id: string): Promise<void> {
  await jobsDb(store)
    .deleteFrom('policy_jobs')
    .where('environment', '=', environment)
    .where('job_id', '=', id)
    .execute();
}

interface PolicyJobTurnsTable {
  environment: string;
  client_id: string;
  admin: number;
  reserved_at: number;
}

type TurnsDb = Kysely<Database & { policy_job_turns: PolicyJobTurnsTable }>;
const turnsDb = (db: Kysely<Database>): TurnsDb => db.withTables<{ policy_job_turns: PolicyJobTurnsTable }>();

/** The environment's turn row, live or lapsed, if any. */
export function turnRow(db: Kysely<Database>, environment: Environment) {
  return turnsDb(db)
    .selectFrom('policy_job_turns')
    .selectAll()
    .where('environment', '=', environment)
    .executeTakeFirst();
}

export async function deleteTurn(db: Kysely<Database>, environment: Environment, clientId: string): Promise<void> {
  await turnsDb(db)
    .deleteFrom('policy_job_turns')
    .where('environment', '=', environment)
    .where('client_id', '=', clientId)
    .execute();
}

/**
 * Gives the turn to `clientId` (or refreshes its own), unless another client's turn reserved at
 * or after `lapsedBefore` stands that it does not outrank (an admin outranks a non-admin). One
 * statement, so two clients at once cannot both end up holding it.
 */
export async function upsertTurn(
  db: Kysely<Database>,
  environment: Environment,
  turn: { clientId: string; admin: boolean },
  now: number,
  lapsedBefore: number,
): Promise<void> {
  const admin = turn.admin ? 1 : 0;
  await turnsDb(db)
    .insertInto('policy_job_turns')
    .values({ environment, client_id: turn.clientId, admin, reserved_at: now })
    .onConflict((oc) =>
      oc
        .column('environment')
        .doUpdateSet({ client_id: turn.clientId, admin, reserved_at: now })
        .where((eb) =>
          eb.or([
            eb('policy_job_turns.reserved_at', '<', lapsedBefore),
            eb('policy_job_turns.client_id', '=', turn.clientId),
            ...(turn.admin ? [eb('policy_job_turns.admin', '=', 0)] : []),
          ]),
        ),
    )
    .execute();
}
