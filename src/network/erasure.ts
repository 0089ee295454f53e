// An entity's erasure (src/trust/erasure.ts) in the network's tables, in the erasure's own
// transaction: its entries in the published set are relabelled or withdrawn (peers drop them at
// their next pull), the identifiers queued because scores for it named them go, and what peers said
// about its identifiers (resolutions and matches) goes unless another live entity still holds them.
import type { Store } from '../store/db.ts';
import { withdrawErased } from './publisher.ts';
import type { Identifier } from './publish-plan.ts';
import { ENTITY_TYPE, type NetworkDb } from './tables.ts';
import { deletePendingOf, forgetIdentifier } from './match-repository.ts';
import { identifierStillHeld } from './entity-join-repository.ts';

export async function eraseFromNetwork(
  trx: NetworkDb,
  store: Store,
  entityId: string,
  identifiers: Identifier[],
): Promise<void> {
  await withdrawErased(trx, store, entityId, identifiers);
  const queued = await deletePendingOf(trx, entityId);
  const candidates = [
    ...identifiers,
    ...queued.map((q) => ({ idType: q.id_type, hash: q.hash })),
    { idType: ENTITY_TYPE, hash: entityId },
  ];
  for (const id of candidates) {
    const stillHeld = id.idType !== ENTITY_TYPE && (await identifierStillHeld(trx, id.idType, id.hash));
    if (stillHeld) continue;
    await forgetIdentifier(trx, id.idType, id.hash);
  }
}
