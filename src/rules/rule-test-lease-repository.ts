// The rule_test_leases table's one owner (migration 033; issue 41 item 1): a row per environment
// whose rule test holds it. test-lease.ts claims, takes over and gives back through these.
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';

/** Whether the lease was free and is now `holder`'s (an existing row is left alone). */
export async function insertLease(
  db: Kysely<Database>,
  environment: Environment,
  holder: string,
  expiresAt: number,
): Promise<boolean> {
  const inserted = await db
    .insertInto('rule_test_leases')
    .values({ environment, holder, expires_at: expiresAt })
    .onConflict((oc) => oc.column('environment').doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Whether `holder` took over the lease expired at `now` (of two taking it at once, one wins). */
export async function takeExpiredLease(
  db: Kysely<Database>,
  environment: Environment,
  holder: string,
  expiresAt: number,
  now: number,
): Promise<boolean> {
  const taken = await db
    .updateTable('rule_test_leases')
    .set({ holder, expires_at: expiresAt })
    .where('environment', '=', environment)
    .where('expires_at', '<=', now)
    .executeTakeFirst();
  return Number(taken.numUpdatedRows) > 0;
}

/** Whether someone holds the environment's lease. */
export async function leaseHeld(db: Kysely<Database>, environment: Environment): Promise<boolean> {
  const current = await db
    .selectFrom('rule_test_leases')
    .select('holder')
    .where('environment', '=', environment)
    .executeTakeFirst();
  return current !== undefined;
}

export async function deleteLease(db: Kysely<Database>, environment: Environment, holder: string): Promise<void> {
  await db.deleteFrom('rule_test_leases').where('environment', '=', environment).where('holder', '=', holder).execute();
}
