// List entries carry the rule revision that last changed them (docs/api.md, "Rules and lists"): the
// revision of the change that added the entry, then of the one that removed it. Every rule or list
// change moves the environment's rule_revisions first in its transaction, which serialises them,
// so an instance that loaded revision R reads exactly what changed since with `changed_revision >
// R` — a list change reloads its delta, not the environment's up to 1,000,000 entries. Entries
// written before this migration have none; they are read by the first, full load.
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

export function listEntryRevisions(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('list_entries').addColumn('changed_revision', 'bigint').execute();
      await db.schema
        .createIndex('list_entries_changed')
        .on('list_entries')
        .columns(['list_id', 'changed_revision'])
        .execute();
    },
  };
}
