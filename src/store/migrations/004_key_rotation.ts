// A rotated API key remembers when it was rotated, so a second (or concurrent) rotation of it
// finds it taken and answers 409 instead of minting another successor (docs/api.md, "API keys").
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

export function keyRotation(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('api_keys').addColumn('rotated_at', 'bigint').execute();
    },
  };
}
