// One rule test per environment across every process (docs/rules.md, "Testing a rule"): a row of
// rule_test_leases (033) is the claim. A test cannot outlive its time limit, so the lease expires
// at the limit and a margin instead of being kept alive: a holder that crashed blocks its
// environment that long at most, and one that finished deletes its row.
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';
import { newId } from '../lib/ids.ts';

/** Held by the lease: what a holder gives back. */
export interface TestLease {
  environment: Environment;
  holder: string;
}

/** The lease, or undefined when another process's test holds it. */
export async function claimTestLease(
  db: Kysely<Database>,
  environment: Environment,
  now: number,
  ttlMs: number,
): Promise<TestLease | undefined> {
  const holder = newId('rtl');
  for (let attempt = 0; attempt < 3; attempt++) {
    const inserted = await db
      .insertInto('rule_test_leases')
      .values({ environment, holder, expires_at: now + ttlMs })
      .onConflict((oc) => oc.column('environment').doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return { environment, holder };
    // an expired lease (its holder died) is taken over; of two taking it at once, one wins
    const taken = await db
      .updateTable('rule_test_leases')
      .set({ holder, expires_at: now + ttlMs })
      .where('environment', '=', environment)
      .where('expires_at', '<=', now)
      .executeTakeFirst();
    if (Number(taken.numUpdatedRows) > 0) return { environment, holder };
    const current = await db
      .selectFrom('rule_test_leases')
      .select('holder')
      .where('environment', '=', environment)
      .executeTakeFirst();
    if (current) return undefined;
  }
  return undefined;
}

export async function releaseTestLease(db: Kysely<Database>, lease: TestLease): Promise<void> {
  await db
    .deleteFrom('rule_test_leases')
    .where('environment', '=', lease.environment)
    .where('holder', '=', lease.holder)
    .execute();
}
