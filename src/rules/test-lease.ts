// One rule test per environment across every process (docs/rules.md, "Testing a rule"): a row of
// rule_test_leases (033) is the claim. A test cannot outlive its time limit, so the lease expires
// at the limit and a margin instead of being kept alive: a holder that crashed blocks its
// environment that long at most, and one that finished deletes its row. The statements are
// rule-test-lease-repository.ts's.
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';
import { newId } from '../lib/ids.ts';
import { deleteLease, insertLease, leaseHeld, takeExpiredLease } from './rule-test-lease-repository.ts';

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
    if (await insertLease(db, environment, holder, now + ttlMs)) return { environment, holder };
    // an expired lease (its holder died) is taken over; of two taking it at once, one wins
    if (await takeExpiredLease(db, environment, holder, now + ttlMs, now)) return { environment, holder };
    if (await leaseHeld(db, environment)) return undefined;
  }
  return undefined;
}

export async function releaseTestLease(db: Kysely<Database>, lease: TestLease): Promise<void> {
  await deleteLease(db, lease.environment, lease.holder);
}
