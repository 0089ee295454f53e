// Per-identifier counts, so the linkage signal costs the same whether an identifier is shared by
// two entities or by twenty thousand (issue 8, item 3). Ingestion keeps the rows current; this
// migration builds them from the links and flags already stored.
//
// It also gives score decisions the two facts a shared-cache pointer is checked against (see
// trust/scoring.ts): the cache key they answer and the store state they were computed from.
import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

/** Rebuilds identifier_stats from identifiers and entities (idempotent: replaces every row). */
export async function backfillIdentifierStats(db: Kysely<unknown>): Promise<void> {
  await sql`delete from identifier_stats`.execute(db);
  await sql`
    insert into identifier_stats (id_type, hash, entities, flagged_entities, version)
    select i.id_type, i.hash, count(*),
      sum(case when e.fraud_reports > 0 or e.blocklisted = 1 then 1 else 0 end), 1
    from identifiers i left join entities e on e.entity_id = i.entity_id
    group by i.id_type, i.hash`.execute(db);
}

export function identifierStats(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('identifier_stats')
        .addColumn('id_type', 'text', (c) => c.notNull())
        .addColumn('hash', 'text', (c) => c.notNull())
        /** entities holding the identifier */
        .addColumn('entities', 'bigint', (c) => c.notNull())
        /** of those, fraud-reported or blocklisted ones */
        .addColumn('flagged_entities', 'bigint', (c) => c.notNull())
        /** bumped with every change of the row: cached scores of its holders check it */
        .addColumn('version', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('identifier_stats_pk', ['id_type', 'hash'])
        .execute();
      await backfillIdentifierStats(db);
      await db.schema.alterTable('decisions').addColumn('cache_key', 'text').execute();
      await db.schema.alterTable('decisions').addColumn('cache_state', 'text').execute();
    },
  };
}
