// The lists and list_entries tables' owner for an erasure (docs/api.md, "Erasure"): the erased id
// becomes its digest in the environment's entity lists, so a block list no longer names the person
// and a re-created entity of the same id is not on it. Handed to the erasure (trust/erasure.ts) by
// the composition root (src/routes.ts) and run in its transaction; the rules registry re-reads its
// lists whole on every instance when the erasure's `entity` row arrives on the feed (live.ts).
import type { Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';
import { moveRevision } from './rule-revision-repository.ts';

/** The id's entries in the environment's entity lists now hold the digest; what each list holds follows. */
export async function eraseFromEntityLists(
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
  if (lists.length === 0) return;
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
  if (Number(changed.numUpdatedRows) > 0) await moveRevision(trx, env);
}
