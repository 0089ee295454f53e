// The environment's rule revision (docs/api.md, "Rules and lists"): every change of a rule or a list
// moves it first, in the change's transaction, and records a `rules` row on the change feed
// last, so that every process applies the change from its next request (live.ts).
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';
import type { ChangeFeed } from '../store/change-feed.ts';
import { bumpRevision } from './rule-revision-repository.ts';

// The registry reads the revision by this path; the counter's statements are rule-revision-repository.ts's.

export type Db = Kysely<Database> | Transaction<Database>;

/** The feed's kind for rule and list changes; its subject is the environment. */
export const RULES_FEED_KIND = 'rules';

/**
 * Runs `change` as one rule or list change of the environment: the counter moved first, the feed
 * row recorded last, all in one transaction: `db`'s when it is one (an approved four-eyes change
 * runs in its approval's), else its own. The caller announces on the feed after it commits.
 */
export async function ruleChange<T>(
  db: Kysely<Database>,
  feed: Pick<ChangeFeed, 'record'>,
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
