// People at the desk (docs/api.md, "People"): users and their sessions, the append-only audit log
// (each entry's hash covers the one before it), and the changes that wait for a second person
// (four eyes). Users belong to the deployment, not to an environment: a person works in live.
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

export function people(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        // lower-cased; the unique index is what makes a second invitation of one address 409
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        // 'invited' | 'active' | 'deactivated'
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('password_hash', 'text')
        .addColumn('invitation_digest', 'text', (c) => c.unique())
        .addColumn('invitation_expires_at', 'bigint')
        .addColumn('failed_logins', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('locked_until', 'bigint')
        .addColumn('totp_secret', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('user_sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
        .addColumn('token_digest', 'text', (c) => c.notNull().unique())
        .addColumn('csrf_digest', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('revoked_at', 'bigint')
        .execute();
      await db.schema.createIndex('user_sessions_user').on('user_sessions').column('user_id').execute();

      await db.schema
        .createTable('audit_log')
        // the entry's place in the chain, assigned by the writer: a deleted entry leaves a gap
        .addColumn('seq', 'bigint', (c) => c.primaryKey())
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('environment', 'text', (c) => c.notNull())
        .addColumn('at', 'bigint', (c) => c.notNull())
        // {"type": "user"|"client", "id", "name"} as JSON
        .addColumn('actor', 'text', (c) => c.notNull())
        .addColumn('actor_id', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('target', 'text')
        .addColumn('before', 'text')
        .addColumn('after', 'text')
        .addColumn('prev_hash', 'text', (c) => c.notNull())
        .addColumn('hash', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('audit_log_actor').on('audit_log').columns(['actor_id', 'seq']).execute();
      await db.schema.createIndex('audit_log_action').on('audit_log').columns(['action', 'seq']).execute();

      await db.schema
        .createTable('pending_changes')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment', 'text', (c) => c.notNull())
        // 'rule_activation' | 'policy_activation' | 'list_deletion'
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('target', 'text', (c) => c.notNull())
        .addColumn('payload', 'text')
        .addColumn('requested_by', 'text', (c) => c.notNull())
        .addColumn('requested_by_id', 'text', (c) => c.notNull())
        // 'pending' | 'approved' | 'rejected' | 'expired'
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('decided_by', 'text')
        .addColumn('decided_at', 'bigint')
        .addColumn('note', 'text')
        .execute();
      await db.schema
        .createIndex('pending_changes_open')
        .on('pending_changes')
        .columns(['environment', 'status', 'created_at'])
        .execute();
    },
  };
}
