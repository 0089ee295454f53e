// The environment's rule revision (docs/api.md, "Rules and lists"): every change of a rule or a list
// moves it first, in the change's transaction, and records a `rules` row on the revocation feed
// last, so that every process applies the change from its next request (live.ts).
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';
import type { RevocationFeed } from '../auth/revocation.ts';

export type Db = Kysely<Database> | Transaction<Database>;

/** The feed's kind for rule and list changes; its subject is the environment. */
export const RULES_FEED_KIND = 'rules';

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
 * Runs `change` as one rule or list change of the environment: the counter moved first, the feed
 * row recorded last, all in one transaction: `db`'s when it is one (an approved four-eyes change
 * runs in its approval's), else its own. The caller announces on the feed after it commits.
 */
export async function ruleChange<T>(
  db: Kysely<Database>,
  feed: Pick<RevocationFeed, 'record'>,
  environment: Environment,
  change: (trx: Transaction<Database>, revision: number) => Promise<T>,
): Promise<T> {
  const run = async (trx: Transaction<Database>) => {
    const revision = await bumpRevision(trx, environment);
    const result = await change(trx, revision);
    await feed.record(trx, RULES_FEED_KIND, environment);
    return result;
  };
  return db.isTransaction ? run(db as Transaction<Database>) : db.transaction().execute(run);
}
