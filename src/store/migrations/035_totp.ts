// A person's second factor (docs/api.md, "People"): a TOTP secret while it is being enrolled and
// once confirmed (both sealed), when it was turned on, the last time step a code was accepted at
// (a code works once), and the recovery codes' digests.
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

export function totp(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('users').addColumn('totp_pending', 'text').execute();
      await db.schema.alterTable('users').addColumn('totp_enabled_at', 'bigint').execute();
      await db.schema.alterTable('users').addColumn('totp_last_step', 'bigint').execute();
      await db.schema.alterTable('users').addColumn('recovery_codes', 'text').execute();
    },
  };
}
