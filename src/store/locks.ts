// Locks and wake-ups that only PostgreSQL needs. SQLite admits one writing transaction at a time
// (and one process's connection serves all its requests), so what these serialise there is
// already serialised, and its readers learn of commits from data_version (changes.ts), not from a
// notification. Features call these and never ask which store runs.
import pg from 'pg';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from './schema.ts';
import type { Store } from './db.ts';

type StoreKind = Pick<Store, 'dialect'>;

/**
 * Holds a lock named by `key` until `trx` ends, so transactions that take the same key run one
 * after the other (PostgreSQL: pg_advisory_xact_lock; a string key is hashed with hashtext). Take
 * it first in the transaction: what the transaction reads afterwards was committed by the previous
 * holder.
 */
export async function advisoryXactLock(store: StoreKind, trx: Transaction<Database>, key: number | string) {
  if (store.dialect !== 'postgres') return;
  if (typeof key === 'number') await sql`select pg_advisory_xact_lock(${key})`.execute(trx);
  else await sql`select pg_advisory_xact_lock(hashtext(${key}))`.execute(trx);
}

/** Wakes the store's listeners on `channel` when `trx` commits (PostgreSQL NOTIFY; nothing on SQLite). */
export async function notify(store: StoreKind, trx: Kysely<Database>, channel: string): Promise<void> {
  if (store.dialect === 'postgres') await sql`select pg_notify(${channel}, '')`.execute(trx);
}

/** The query's rows stay locked against other writers until the transaction ends (PostgreSQL FOR UPDATE). */
export function lockForUpdate<Query extends { forUpdate(): Query }>(store: StoreKind, query: Query): Query {
  return store.dialect === 'postgres' ? query.forUpdate() : query;
}

export interface Listening {
  stop(): Promise<void>;
}

/**
 * Calls `wake` on every notification on `channel` (PostgreSQL LISTEN, on a connection of its own,
 * reconnected 500 ms after it drops), and after each (re)connect, since anything notified while
 * nobody listened was missed. Resolves once the first attempt has listened (and woken) or failed;
 * undefined when the store has no notifications (SQLite).
 */
export async function listen(
  store: Pick<Store, 'pgConfig'>,
  channel: string,
  wake: () => Promise<void>,
): Promise<Listening | undefined> {
  const config = store.pgConfig;
  if (!config) return undefined;
  let stopped = false;
  let current: pg.Client | undefined;
  const connect = async (): Promise<void> => {
    if (stopped) return;
    const client = new pg.Client(config);
    const retry = () => {
      if (current !== client) return;
      current = undefined;
      client.end().catch(() => {});
      if (!stopped) setTimeout(() => void connect(), 500).unref();
    };
    client.on('error', retry);
    client.on('end', retry);
    client.on('notification', () => void wake().catch(() => {}));
    current = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${channel}`);
      await wake();
    } catch {
      retry();
    }
  };
  await connect();
  return {
    async stop() {
      stopped = true;
      await current?.end().catch(() => {});
    },
  };
}
