// identifier_stats, kept current by ingestion: per identifier, the entities holding it and how
// many of them are flagged (fraud-reported or blocklisted), and a version that cached scores of its
// holders check (profile.ts). It replaces walking every holder of an identifier, which made one
// device hash shared by 20,000 accounts cost a score 350 ms and a fraud batch seconds.
import { sql, type Transaction } from 'kysely';
import type { Database, EntitiesTable, IdentifiersTable } from '../store/schema.ts';
import { chunks } from '../store/chunks.ts';
import type { Environment } from '../lib/principal.ts';

type Flaggable = Pick<EntitiesTable, 'entity_id' | 'fraud_reports' | 'blocklisted'>;

export const isFlagged = (e: Pick<EntitiesTable, 'fraud_reports' | 'blocklisted'>) =>
  e.fraud_reports > 0 || e.blocklisted === 1;

/**
 * Keeps identifier_stats current: a new link adds its entity (flagged or not) to the identifier;
 * an entity whose flagged status changed moves each identifier it already held. The cost is the
 * number of identifiers of the batch's entities, whatever the number of entities sharing them.
 */
export async function writeIdentifiers(
  trx: Transaction<Database>,
  environment: Environment,
  entities: ReadonlyMap<string, Flaggable>,
  wasFlagged: ReadonlyMap<string, boolean>,
  links: Iterable<IdentifiersTable>,
): Promise<void> {
  const changed = [...entities.values()]
    .filter((e) => isFlagged(e) !== wasFlagged.get(e.entity_id))
    .map((e) => e.entity_id);
  const deltas = new Map<
    string,
    {
      environment: Environment;
      id_type: string;
      hash: string;
      entities: number;
      flagged_entities: number;
      version: number;
    }
  >();
  const delta = (idType: string, hash: string, entities: number, flagged: number) => {
    const key = `${idType}\u0000${hash}`;
    const d = deltas.get(key) ?? { environment, id_type: idType, hash, entities: 0, flagged_entities: 0, version: 1 };
    d.entities += entities;
    d.flagged_entities += flagged;
    deltas.set(key, d);
  };
  // Read before the batch's new links are written: these are the links the entity already had.
  for (const ids of chunks(changed)) {
    const held = await trx
      .selectFrom('identifiers')
      .select(['id_type', 'hash', 'entity_id'])
      .where('environment', '=', environment)
      .where('entity_id', 'in', ids)
      .execute();
    for (const h of held) delta(h.id_type, h.hash, 0, isFlagged(entities.get(h.entity_id)!) ? 1 : -1);
  }
  for (const rows of chunks([...links])) {
    // Only links that are new count: one already stored returns nothing.
    const added = await trx
      .insertInto('identifiers')
      .values(rows)
      .onConflict((oc) => oc.columns(['environment', 'id_type', 'hash', 'entity_id']).doNothing())
      .returning(['id_type', 'hash', 'entity_id'])
      .execute();
    for (const a of added) delta(a.id_type, a.hash, 1, isFlagged(entities.get(a.entity_id)!) ? 1 : 0);
  }
  // In key order, so concurrent batches lock shared rows in the same order.
  const rows = [...deltas.entries()]
    .filter(([, d]) => d.entities !== 0 || d.flagged_entities !== 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, d]) => d);
  for (const batch of chunks(rows)) {
    await trx
      .insertInto('identifier_stats')
      .values(batch)
      .onConflict((oc) =>
        oc.columns(['environment', 'id_type', 'hash']).doUpdateSet({
          entities: sql`identifier_stats.entities + excluded.entities`,
          flagged_entities: sql`identifier_stats.flagged_entities + excluded.flagged_entities`,
          version: sql`identifier_stats.version + 1`,
        }),
      )
      .execute();
  }
}
