// What a desk's rules, lists and reviews hold about an erased entity (docs/api.md, "Erasure"),
// rewritten in the erasure's transaction: the id becomes its digest in entity-list entries (a
// block list no longer names the person, and a re-created entity of the same id is not on it),
// in reviews and their notes, and in what a score decision stored for its rules (the matched and
// shadow rules' reads, the rule inputs' context). Written against the tables, not the rules
// feature, which sits above trust; the rules registry re-reads its lists whole on every instance
// when the erasure's `entity` row arrives on the feed (src/app.ts).
import { sql, type Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';
import { containsJsonString, replaceDeep, replaceToken } from './erasure-text.ts';
import {
  DECISION_RULE_COLUMNS,
  decisionRuleColumnsLike,
  setDecisionRuleColumns,
} from '../audit/decision-repository.ts';

const RULE_COLUMNS = DECISION_RULE_COLUMNS;

export async function eraseFromRulesAndReviews(
  trx: Transaction<Database>,
  env: Environment,
  id: string,
  digest: string,
): Promise<void> {
  const lists = await trx
    .selectFrom('lists')
    .select('id')
    .where('environment', '=', env)
    .where('kind', '=', 'entity')
    .execute();
  if (lists.length > 0) {
    const ids = lists.map((l) => l.id);
    // what each list holds (031_list_held) counts its values' characters: the digest's length replaces the id's
    const held = await trx
      .selectFrom('list_entries')
      .select(['list_id', (eb) => eb.fn.countAll<number>().as('n')])
      .where('list_id', 'in', ids)
      .where('value', '=', id)
      .where('removed_at', 'is', null)
      .groupBy('list_id')
      .execute();
    const changed = await trx
      .updateTable('list_entries')
      .set({ value: digest })
      .where('list_id', 'in', ids)
      .where('value', '=', id)
      .executeTakeFirst();
    for (const row of held)
      await trx
        .updateTable('lists')
        .set((eb) => ({ held_chars: eb('held_chars', '+', Number(row.n) * (digest.length - id.length)) }))
        .where('id', '=', row.list_id)
        .execute();
    // The revision is part of every score's cache key: no cached score read the entry as it was.
    if (Number(changed.numUpdatedRows) > 0) {
      await trx
        .updateTable('rule_revisions')
        .set((eb) => ({ revision: eb('revision', '+', 1) }))
        .where('environment', '=', env)
        .execute();
    }
  }
  await trx
    .updateTable('reviews')
    .set({ entity_id: digest })
    .where('environment', '=', env)
    .where('entity_id', '=', id)
    .execute();
  const pattern = `%${id.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const notes = await trx
    .selectFrom('reviews')
    .select(['id', 'note'])
    .where('environment', '=', env)
    .where(sql<boolean>`note like ${pattern} escape '\\'`)
    .execute();
  for (const row of notes) {
    const note = replaceToken(row.note ?? '', id, digest);
    if (note !== row.note) await trx.updateTable('reviews').set({ note }).where('id', '=', row.id).execute();
  }
  const json = containsJsonString(id);
  // One pass over the environment's decisions for the three columns, not one per column.
  const rows = await decisionRuleColumnsLike(trx, env, json);
  for (const row of rows) {
    const changes: Partial<Record<(typeof RULE_COLUMNS)[number], string>> = {};
    for (const column of RULE_COLUMNS) {
      const before = row[column];
      if (before === null || before === undefined) continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(before);
      } catch {
        continue;
      }
      const text = JSON.stringify(replaceDeep(parsed, id, digest));
      if (text !== before) changes[column] = text;
    }
    if (Object.keys(changes).length > 0) await setDecisionRuleColumns(trx, row.id, changes);
  }
}
