import { PostgresAdapter, type Kysely } from 'kysely';

/** The two stores Vouch runs on; migrations and the few dialect-specific queries branch on it. */
export type Dialect = 'sqlite' | 'postgres';

/** The dialect of a store's Kysely instance, for code that holds only that (writers, compiled shapes). */
export function dialectOf<DB>(db: Kysely<DB>): Dialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}
