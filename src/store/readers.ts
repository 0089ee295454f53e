// The store as a worker thread reads it (policy jobs, rule replays): a connection of its own,
// opened for the job and closed after it, so neither the reads nor the row decoding run on the
// serving thread (with SQLite, better-sqlite3 reads synchronously: 150k decisions cost the event
// loop ~2 s of reads).
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import type { Database } from './schema.ts';
import { ignoreClientErrors, type Store } from './db.ts';

/** Where the worker reads from: plain data, so it crosses to the thread. */
export type StoreSource =
  { dialect: 'sqlite'; path: string } | { dialect: 'postgres'; connectionString?: string; options?: string };

/** The store's source for a second connection; undefined when it has none (in-memory SQLite). */
export function storeSource(store: Store): StoreSource | undefined {
  if (store.dialect === 'sqlite') {
    const handle = store.sqlite;
    return handle && !handle.memory && handle.name !== '' ? { dialect: 'sqlite', path: handle.name } : undefined;
  }
  const config = store.pgConfig;
  if (!config) return undefined;
  return { dialect: 'postgres', connectionString: config.connectionString, options: config.options };
}

export function openReader(source: StoreSource): Kysely<Database> {
  if (source.dialect === 'sqlite') {
    const handle = new BetterSqlite3(source.path, { fileMustExist: true });
    // A reader only: WAL lets it read beside the serving connection's writes.
    handle.pragma('query_only = ON');
    handle.pragma('busy_timeout = 5000');
    return new Kysely<Database>({ dialect: new SqliteDialect({ database: handle }) });
  }
  const pool = new pg.Pool({
    connectionString: source.connectionString,
    options: source.options,
    max: 1,
    connectionTimeoutMillis: 2000,
  });
  pool.on('error', () => {
    // A dropped connection fails the job's next query, which reports it.
  });
  pool.on('connect', ignoreClientErrors);
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
