// The aggregate behind dormant_reactivation (issue 10): when each entity last completed a trade.
// last_event_at is not it: outcome events (a dispute resolved, an identifier linked) move it long
// after the last trade. Backfilled from the stored events; ingestion keeps it current.
import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

export function p2pFeatures(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable('entities')
        .addColumn('last_trade_at', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      await sql`
        update entities set last_trade_at = coalesce((
          select max(ev.occurred_at) from events ev where ev.entity_id = entities.entity_id and ev.type = 'trade.completed'
        ), 0)`.execute(db);
    },
  };
}
