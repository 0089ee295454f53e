// Reads of the entity tables (identifiers, identifier_stats) that the entity.flagged fan-out needs
// to find a flagged entity's neighbours. These tables are not webhooks'; the queries wait here, in
// one place, for their owner's repository (issue 41 item 1, one owner per table).
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';

/** The identifiers of `entityIds` held by at most `fanout` entities (hubs excluded: docs/api.md, "Rings"). */
export async function nonHubIdentifiersOf(
  db: Kysely<Database>,
  environment: Environment,
  entityIds: string[],
  fanout: number,
): Promise<{ id_type: string; hash: string; entity_id: string }[]> {
  return db
    .selectFrom('identifiers as i')
    .innerJoin('identifier_stats as s', (j) =>
      j
        .onRef('s.environment', '=', 'i.environment')
        .onRef('s.id_type', '=', 'i.id_type')
        .onRef('s.hash', '=', 'i.hash'),
    )
    .select(['i.id_type', 'i.hash', 'i.entity_id'])
    .where('i.environment', '=', environment)
    .where('i.entity_id', 'in', entityIds)
    .where('s.entities', '<=', fanout)
    .execute();
}

/** The first `limit` holders of one identifier, by entity id. */
export async function identifierHolders(
  db: Kysely<Database>,
  environment: Environment,
  type: string,
  hash: string,
  limit: number,
): Promise<{ entity_id: string }[]> {
  return db
    .selectFrom('identifiers')
    .select('entity_id')
    .where('environment', '=', environment)
    .where('id_type', '=', type)
    .where('hash', '=', hash)
    .orderBy('entity_id')
    .limit(limit)
    .execute();
}
