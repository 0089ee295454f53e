// What each list holds (docs/api.md, "Rules and lists"): the count and the characters of its entries
// not removed, kept with every change in its transaction, so the environment's bound is checked
// from a few list rows instead of counting up to a million entries on each add. An expired entry
// is held until a sweep marks it removed at its expiry (rules/lists.ts), which a rule test reads
// exactly as the expiry. The partial index finds the expired entries of a list without a scan.
import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

export function listHeld(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable('lists')
        .addColumn('held_entries', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .alterTable('lists')
        .addColumn('held_chars', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      await sql`update lists set
          held_entries = (select count(*) from list_entries e where e.list_id = lists.id and e.removed_at is null),
          held_chars = (select coalesce(sum(length(e.value)), 0) from list_entries e
                        where e.list_id = lists.id and e.removed_at is null)`.execute(db);
      await sql`create index list_entries_expiring on list_entries (list_id, expires_at)
                where removed_at is null and expires_at is not null`.execute(db);
    },
  };
}
