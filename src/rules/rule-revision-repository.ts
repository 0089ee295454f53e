// The rule_revisions table's one owner (issue 41 item 1): each environment's rule revision, which
// every rule or list change moves first, in its transaction (revisions.ts ruleChange).
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** Moves the environment's counter and returns its new value: the first write of every rule or list change. */
export async function bumpRevision(trx: Db, environment: Environment): Promise<number> {
  const row = await trx
    .updateTable('rule_revisions')
    .set((eb) => ({ revision: eb('revision', '+', 1) }))
    .where('environment', '=', environment)
    .returning('revision')
    .executeTakeFirst();
  if (row) return Number(row.revision);
  // an environment the migration did not seed (it seeds live and test)
  await trx.insertInto('rule_revisions').values({ environment, revision: 1 }).execute();
  return 1;
}

export async function currentRevision(db: Db, environment: Environment): Promise<number> {
  const row = await db
    .selectFrom('rule_revisions')
    .select('revision')
    .where('environment', '=', environment)
    .executeTakeFirst();
  return Number(row?.revision ?? 0);
}

/**
 * Moves the environment's counter without reading it back: an erasure's rewrite of an entity
 * list's entries (list-erasure-repository.ts), which every score's cache key must see.
 */
export async function moveRevision(trx: Db, environment: Environment): Promise<void> {
  await trx
    .updateTable('rule_revisions')
    .set((eb) => ({ revision: eb('revision', '+', 1) }))
    .where('environment', '=', environment)
    .execute();
}
