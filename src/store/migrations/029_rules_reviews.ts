// Rules, lists, outcomes and reviews (docs/rules.md, docs/api.md "Rules and lists" and "Reviews").
// - rules: a rule's current version; rule_versions: every version as it was saved, with who saved
//   it, when and why (a decision names the version it used, and a rule test replays exactly that).
// - lists and list_entries: an entry is never deleted, only marked removed (or it expires), so a
//   rule test sees each list as it was at each decision's time.
// - rule_revisions: one counter per environment, moved in the transaction of every rule or list
//   change; it is part of the score cache key, so no cached score outlives a change.
// - decisions get the outcome, the matched and shadow rules, and the inputs a rule reads that the
//   features do not hold (rule_inputs), so a rule can be replayed on a stored decision.
// - reviews: opened by a score's outcome in the same commit as its decision (audit/decisions.ts).
import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

export function rulesAndReviews(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('rules')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        /** the whole rule as saved (name, condition, action, override, final, cap, description), JSON */
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_by', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('rules_environment').on('rules').columns(['environment', 'status', 'id']).execute();

      await db.schema
        .createTable('rule_versions')
        .addColumn('rule_id', 'text', (c) => c.notNull())
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('environment', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('changed_at', 'bigint', (c) => c.notNull())
        .addColumn('changed_by', 'text', (c) => c.notNull())
        .addColumn('reason', 'text')
        .addPrimaryKeyConstraint('rule_versions_pk', ['rule_id', 'version'])
        .execute();

      await db.schema
        .createTable('rule_revisions')
        .addColumn('environment', 'text', (c) => c.primaryKey())
        .addColumn('revision', 'bigint', (c) => c.notNull())
        .execute();
      await sql`insert into rule_revisions (environment, revision) values ('live', 0), ('test', 0)`.execute(db);

      await db.schema
        .createTable('lists')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('deleted_at', 'bigint')
        .execute();
      // One live list per name; a deleted list's name can be taken again.
      await sql`create unique index lists_name on lists (environment, name) where deleted_at is null`.execute(db);

      await db.schema
        .createTable('list_entries')
        .addColumn('list_id', 'text', (c) => c.notNull())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('added_at', 'bigint', (c) => c.notNull())
        .addColumn('added_by', 'text', (c) => c.notNull())
        .addColumn('reason', 'text')
        .addColumn('expires_at', 'bigint')
        .addColumn('removed_at', 'bigint')
        .addColumn('removed_by', 'text')
        .addPrimaryKeyConstraint('list_entries_pk', ['list_id', 'value', 'added_at'])
        .execute();
      // At most one present entry per value.
      await sql`create unique index list_entries_present on list_entries (list_id, value) where removed_at is null`.execute(
        db,
      );

      await db.schema.alterTable('decisions').addColumn('outcome', 'text').execute();
      await db.schema.alterTable('decisions').addColumn('rules', 'text').execute();
      await db.schema.alterTable('decisions').addColumn('shadow_rules', 'text').execute();
      await db.schema.alterTable('decisions').addColumn('rule_inputs', 'text').execute();

      await db.schema
        .createTable('reviews')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment', 'text', (c) => c.notNull())
        .addColumn('owner_client_id', 'text', (c) => c.notNull())
        .addColumn('decision_id', 'text', (c) => c.notNull().unique())
        .addColumn('entity_id', 'text', (c) => c.notNull())
        /** the decision's outcome: review, hold, or approve for a sampled one */
        .addColumn('outcome', 'text', (c) => c.notNull())
        /** 'outcome' (opened by the outcome) or 'sample' (the policy's review_sample_rate) */
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('sample_rate', 'double precision')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('opened_at', 'bigint', (c) => c.notNull())
        .addColumn('due_at', 'bigint', (c) => c.notNull())
        .addColumn('assignee', 'text')
        .addColumn('claimed_at', 'bigint')
        .addColumn('resolution', 'text')
        .addColumn('resolution_label', 'text')
        .addColumn('note', 'text')
        .addColumn('added_to_list', 'text')
        .addColumn('resolved_at', 'bigint')
        .addColumn('resolved_by', 'text')
        .execute();
      await db.schema.createIndex('reviews_queue').on('reviews').columns(['environment', 'status', 'due_at']).execute();
      await db.schema
        .createIndex('reviews_owner')
        .on('reviews')
        .columns(['environment', 'owner_client_id', 'status', 'due_at'])
        .execute();
      await db.schema.createIndex('reviews_entity').on('reviews').columns(['environment', 'entity_id']).execute();
    },
  };
}
