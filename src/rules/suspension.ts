// Suspending a rule that kept exceeding the run-time budget (docs/rules.md, "Cost"): the registry
// takes it out of its scores at once; this sets it to draft in the store, through the ordinary
// update, so every instance reloads without it and the change is versioned and announced.
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { ChangeFeed } from '../store/change-feed.ts';
import { getRule, isLive, updateRule, type Change, type RuleRow } from './repository.ts';

/**
 * Sets a rule that kept exceeding the run-time budget to draft (docs/rules.md, "Cost"), with
 * `rule.changed` and the reason in its versions — unless it changed since the version that did.
 */
export async function suspendRule(
  db: Kysely<Database>,
  feed: Pick<ChangeFeed, 'record'>,
  c: Change,
  id: string,
  version: number,
): Promise<RuleRow | null> {
  const current = await getRule(db, c.environment, id);
  if (!current || current.version !== version || !isLive(current.status)) return null;
  return updateRule(db, feed, c, id, { status: 'draft' }, null);
}
