// Fraud rings (docs/signals.md, "Rings"): when each entity was last flagged in the ring sense — a
// fraud report, a blocklisting, a chargeback or a lost dispute — so the ring signals can weigh a
// flagged neighbour by recency without reading its events. Backfilled from the stored events;
// ingestion keeps it current. A lost dispute recorded only on the counterparty's side (the winner's
// `dispute.resolved`) cannot be dated from the loser's own events: its last event time stands in.
import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

export function rings(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable('entities')
        .addColumn('flagged_at', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      await sql`
        update entities set flagged_at = coalesce((
          select max(ev.occurred_at) from events ev
          where ev.environment = entities.environment and ev.entity_id = entities.entity_id
            and ev.type in ('fraud.reported', 'entity.blocklisted', 'chargeback')
        ), 0)`.execute(db);
      await sql`update entities set flagged_at = last_event_at where flagged_at = 0 and disputes_lost > 0`.execute(db);
    },
  };
}
