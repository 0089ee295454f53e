// An entity's erasure (src/trust/erasure.ts) in the network's tables, in the erasure's own
// transaction: its entries in the published set are relabelled or withdrawn (peers drop them at
// their next pull), the identifiers queued because scores for it named them go, and what peers said
// about its identifiers (resolutions and matches) goes unless another live entity still holds them.
import { sql } from 'kysely';
import type { Store } from '../store/db.ts';
import { withdrawErased } from './publisher.ts';
import type { Identifier } from './publish-plan.ts';
import { ENTITY_TYPE, type NetworkDb } from './tables.ts';

export async function eraseFromNetwork(
  trx: NetworkDb,
  store: Store,
  entityId: string,
  identifiers: Identifier[],
): Promise<void> {
  await withdrawErased(trx, store, entityId, identifiers);
  const queued = await trx
    .deleteFrom('network_pending')
    .where('entity_id', '=', entityId)
    .returning(['id_type', 'hash'])
    .execute();
  const candidates = [
    ...identifiers,
    ...queued.map((q) => ({ idType: q.id_type, hash: q.hash })),
    { idType: ENTITY_TYPE, hash: entityId },
  ];
  for (const id of candidates) {
    const stillHeld =
      id.idType !== ENTITY_TYPE &&
      (await trx
        .selectFrom('identifiers')
        .select(sql`1`.as('one'))
        .where('environment', '=', 'live')
        .where('id_type', '=', id.idType)
        .where('hash', '=', id.hash)
        .union(
          trx
            .selectFrom('network_pending')
            .select(sql`1`.as('one'))
            .where('id_type', '=', id.idType)
            .where('hash', '=', id.hash),
        )
        .executeTakeFirst());
    if (stillHeld) continue;
    await trx.deleteFrom('network_resolved').where('id_type', '=', id.idType).where('hash', '=', id.hash).execute();
    await trx.deleteFrom('network_matches').where('id_type', '=', id.idType).where('hash', '=', id.hash).execute();
  }
}
