// The webhook_fanouts table's reads and writes (issue 41 item 1, one owner per table): fanout.ts
// keeps the planning and the expansion's slices and calls these. Each takes the executor: a Kysely
// instance or a transaction; a claim's candidates come back unexecuted, for store/claims.ts to lock.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';
import { likeEscaped } from '../store/like.ts';

type Db = Kysely<Database> | Transaction<Database>;

export async function insertFanoutRow(
  trx: Db,
  row: { id: string; environment: Environment; owner_client_id: string; facts: string; created_at: number },
): Promise<void> {
  await trx
    .insertInto('webhook_fanouts')
    .values({
      id: row.id,
      environment: row.environment,
      owner_client_id: row.owner_client_id,
      type: 'entity.flagged',
      facts: row.facts,
      plan: null,
      created_at: row.created_at,
    })
    .execute();
}

/** The oldest fan-out row no worker holds at `now`, as a query (the claim applies its row locks). */
export function oldestFreeFanoutQuery(db: Db, now: number) {
  return db.selectFrom('webhook_fanouts').select('id').where('lease_until', '<', now).orderBy('created_at').limit(1);
}

/** Leases the row until `until` if still free at `now`; returns it when leased. */
export async function leaseFanout(db: Db, id: string, until: number, now: number) {
  return db
    .updateTable('webhook_fanouts')
    .set({ lease_until: until })
    .where('id', '=', id)
    .where('lease_until', '<', now)
    .returning(['id', 'environment', 'owner_client_id', 'facts', 'plan', 'progress', 'created_at'])
    .execute();
}

/** Stores the row's plan while the lease `lease` holds; false when the lease was lost. */
export async function storeFanoutPlan(db: Db, id: string, lease: number, plan: string): Promise<boolean> {
  const stored = await db
    .updateTable('webhook_fanouts')
    .set({ plan })
    .where('id', '=', id)
    .where('lease_until', '=', lease)
    .executeTakeFirst();
  return Number(stored.numUpdatedRows) !== 0;
}

/** Deletes the finished row while the lease holds; the number of rows deleted (0: lease lost). */
export async function deleteFanout(trx: Db, id: string, lease: number): Promise<bigint> {
  const result = await trx
    .deleteFrom('webhook_fanouts')
    .where('id', '=', id)
    .where('lease_until', '=', lease)
    .executeTakeFirst();
  return result.numDeletedRows;
}

/** Records the row's progress while the lease holds; the number of rows updated (0: lease lost). */
export async function setFanoutProgress(trx: Db, id: string, lease: number, progress: number): Promise<bigint> {
  const result = await trx
    .updateTable('webhook_fanouts')
    .set({ progress })
    .where('id', '=', id)
    .where('lease_until', '=', lease)
    .executeTakeFirst();
  return result.numUpdatedRows;
}

/**
 * Takes every fan-out lease of the environment back (an erasure, trust/erasure.ts): a worker holding
 * a plan read before the erasure loses its lease, so it can write nothing from that plan, and the
 * next claim reads the rewritten row. Every row of the environment is locked until the caller commits,
 * so no claim can start a plan from the data being erased.
 */
export async function revokeFanoutLeases(trx: Db, environment: Environment): Promise<void> {
  await trx.updateTable('webhook_fanouts').set({ lease_until: 0 }).where('environment', '=', environment).execute();
}

/** The environment's fan-out rows whose facts or plan match the LIKE `pattern` (escape character `\`). */
export async function fanoutsLike(trx: Db, environment: Environment, pattern: string) {
  return trx
    .selectFrom('webhook_fanouts')
    .select(['id', 'facts', 'plan'])
    .where('environment', '=', environment)
    .where((eb) => eb.or([likeEscaped('facts', pattern), likeEscaped('plan', pattern)]))
    .execute();
}

/** Replaces a fan-out row's facts and plan. */
export async function rewriteFanout(trx: Db, id: string, facts: string, plan: string | null): Promise<void> {
  await trx.updateTable('webhook_fanouts').set({ facts, plan }).where('id', '=', id).execute();
}
