// Opens the store for either dialect behind one Kysely instance; everything above this file is
// dialect-agnostic.
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { Kysely, PostgresDialect, SqliteDialect, sql, type LogEvent } from 'kysely';
import type { Database } from './schema.ts';
import { migrate } from './migrations.ts';
import { ChangeWatcher } from './changes.ts';
import { DEFAULT_WAL_LIMIT_BYTES, startCheckpointer, type Checkpointer } from './checkpointer.ts';
import { preparesHotShapes } from './prepared.ts';
import { registerDirect } from './direct.ts';
import type { Dialect } from './dialect.ts';

// BIGINT columns hold epoch milliseconds and counters, all well inside 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v: string) => Number(v));

export interface Store {
  db: Kysely<Database>;
  dialect: Dialect;
  /** SQLite only: the raw handle, for PRAGMA data_version (cross-process change detection). */
  sqlite?: BetterSqlite3.Database;
  /** Cheap "may have changed" signal for caches (SQLite only; see changes.ts). */
  changes: ChangeWatcher;
  /** PostgreSQL only: connection settings, for LISTEN on a dedicated connection. */
  pgConfig?: pg.ClientConfig;
  ping(): Promise<void>;
  migrate(): Promise<string[]>;
  close(): Promise<void>;
  /**
   * SQLite with `sqliteCheckpoints: 'writer'`: called by the writer between its commits; when the
   * WAL is over its bound, finishes a PASSIVE checkpoint there, where no commit can run beside it.
   */
  checkpointIfDue?(): Promise<boolean>;
  /** Reports every query's duration (for the latency histogram); undefined stops the reports. */
  observeQueries?(observer: QueryObserver | undefined): void;
}

/** A statement's kind as the query histogram labels Kysely's: its first word when a known one, else raw. */
const OPERATIONS = new Set(['select', 'insert', 'update', 'delete']);
const operationOf = (text: string) => {
  const word = /^\s*(\w+)/.exec(text)?.[1]?.toLowerCase() ?? '';
  return OPERATIONS.has(word) ? word : 'raw';
};

/** A query's kind (select, insert, update, delete, raw, …), its duration, and whether it failed. */
type QueryObserver = (operation: string, seconds: number, failed: boolean) => void;

/**
 * Kysely's `log` hook, which times every query anyway once it is set: the observer is looked up
 * per query, so the app can attach (and detach) its metrics after the store is open.
 */
function queryTiming(): {
  log: (event: LogEvent) => void;
  observe(observer: QueryObserver | undefined): void;
  /** a query run outside Kysely (direct.ts) */
  report: QueryObserver;
} {
  let current: QueryObserver | undefined;
  return {
    report(operation, seconds, failed) {
      current?.(operation, seconds, failed);
    },
    log(event) {
      if (!current) return;
      const kind = event.query.query.kind;
      const operation = kind.endsWith('QueryNode')
        ? kind.slice(0, -'QueryNode'.length).toLowerCase()
        : kind === 'RawNode'
          ? 'raw'
          : 'other';
      current(operation, event.queryDurationMillis / 1000, event.level === 'error');
    },
    observe(observer) {
      current = observer;
    },
  };
}

export interface StoreOptions {
  /** PostgreSQL schema to use (tests isolate themselves in one each) */
  schema?: string;
  poolSize?: number;
  /** SQLite: NORMAL (default) survives a process crash; FULL also a power loss, at an fsync per commit */
  sqliteSynchronous?: 'normal' | 'full';
  /** VOUCH_SQLITE_WAL_LIMIT_MB in bytes: a larger WAL is truncated (checkpointer.ts) */
  sqliteWalLimitBytes?: number;
  /**
   * SQLite checkpoints: 'thread' (default) a checkpoint thread alone; 'writer' the thread, and the
   * process's writer finishes them between its commits (checkpointIfDue); 'none' for a cluster
   * worker whose primary is the host's writer and checkpoints.
   */
  sqliteCheckpoints?: 'thread' | 'writer' | 'none';
}

/** How long the checkpoint thread leaves an over-long WAL to the writer before it truncates it itself. */
const WRITER_CHECKPOINT_GRACE_MS = 2000;

export function openStore(url: string, options: StoreOptions = {}): Store {
  if (url.startsWith('sqlite:')) return openSqlite(url.slice('sqlite:'.length), options);
  return openPostgres(url, options);
}

/**
 * The database holds client and key digests and (sealed) signing keys: readable by its owner
 * only. A directory Vouch creates is 0700; the file is created 0600 before SQLite opens it, and
 * SQLite gives its -wal and -shm files the database file's mode. A file made by an older version
 * (0644) is narrowed at the next start; an existing directory is left as it is (it may be shared,
 * e.g. /var/lib): the files in it are what is protected.
 */
function restrictSqliteFiles(path: string): void {
  const dir = dirname(path);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  closeSync(openSync(path, 'a', 0o600));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      chmodSync(file, 0o600);
    } catch (err) {
      // Absent (-wal/-shm before first use), or not ours to change (EPERM): leave it.
      if (!['ENOENT', 'EPERM'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err;
    }
  }
}

function openSqlite(
  path: string,
  {
    sqliteSynchronous: synchronous = 'normal',
    sqliteWalLimitBytes: walLimitBytes,
    sqliteCheckpoints: checkpoints = 'thread',
  }: StoreOptions,
): Store {
  if (path !== ':memory:' && path !== '') restrictSqliteFiles(path);
  const handle = new BetterSqlite3(path);
  handle.pragma('journal_mode = WAL');
  // NORMAL in WAL mode: a commit survives a process crash (kill -9); FULL also syncs the WAL at
  // every commit, so it survives a power loss too (docs/operations.md).
  handle.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  handle.pragma('foreign_keys = ON');
  handle.pragma('busy_timeout = 5000');
  // An erasure (docs/operations.md, "Erasure") must not leave the entity's bytes in the file: ON
  // zeroes deleted cells and freed pages (FAST would leave freelist pages as they were), for about
  // 13% of ingestion throughput (docs/decisions.md, 2026-11-27).
  handle.pragma('secure_delete = ON');
  // A 16 MiB page cache (default 2 MiB) keeps the hot aggregate pages of a large history in memory.
  handle.pragma('cache_size = -16384');
  // Checkpoints run beside the serving connection, not inside its commits (checkpointer.ts). A WAL
  // that starts over keeps its file up to the bound: cutting it back (64 MiB, as it once was) made
  // the commit that restarts it truncate the file on the event loop, a 38–58 ms stall each time
  // (docs/benchmarks.md, "Open loop").
  let checkpointer: Checkpointer | undefined;
  if (path !== ':memory:' && path !== '') {
    handle.pragma('wal_autocheckpoint = 0');
    handle.pragma(`journal_size_limit = ${Math.max(64 * 1024 * 1024, walLimitBytes ?? DEFAULT_WAL_LIMIT_BYTES)}`);
    if (checkpoints !== 'none') {
      checkpointer = startCheckpointer(path, () => handle.pragma('wal_autocheckpoint = 1000'), {
        ...(walLimitBytes === undefined ? {} : { walLimitBytes }),
        ...(checkpoints === 'writer' ? { delegateMs: WRITER_CHECKPOINT_GRACE_MS } : {}),
      });
    }
  }
  // Kysely prepares every query afresh; preparing the profile query costs more than running it,
  // so statements are kept by their SQL text (a bounded set: queries are built from fixed shapes).
  const statements = new Map<string, BetterSqlite3.Statement>();
  const database = {
    close: () => handle.close(),
    prepare(text: string) {
      let stmt = statements.get(text);
      if (!stmt) {
        if (statements.size >= 500) statements.clear();
        stmt = handle.prepare(text);
        statements.set(text, stmt);
      }
      return stmt;
    },
  };
  const timing = queryTiming();
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }), log: timing.log });
  const run = (text: string, parameters: readonly unknown[]): unknown[] => {
    const stmt = database.prepare(text);
    const start = performance.now();
    let failed = true;
    try {
      const rows = stmt.reader ? stmt.all(...parameters) : (stmt.run(...parameters), []);
      failed = false;
      return rows;
    } finally {
      timing.report(operationOf(text), (performance.now() - start) / 1000, failed);
    }
  };
  registerDirect(db, {
    run: (text, parameters) => (handle.inTransaction ? undefined : run(text, parameters)),
    atomically(work) {
      if (handle.inTransaction) return false;
      handle.transaction(() => work(run))();
      return true;
    },
  });
  return {
    db,
    dialect: 'sqlite',
    sqlite: handle,
    changes: new ChangeWatcher(handle),
    async ping() {
      handle.prepare('select 1').get();
    },
    migrate: () => migrate(db as Kysely<unknown>, 'sqlite'),
    /** true when it ran a checkpoint */
    async checkpointIfDue() {
      if (!checkpointer?.due) return false;
      // PASSIVE waits for nobody. Run by the only writer between its commits, it copies what the
      // thread left; once it has copied everything, the next commit starts the WAL over from its
      // beginning (unless a reader still reads an old snapshot: then the next pause tries again).
      const { rows } = await sql<{
        busy: number;
        log: number;
        checkpointed: number;
      }>`pragma wal_checkpoint(PASSIVE)`.execute(db);
      const status = rows[0];
      if (status && status.busy === 0 && status.log === status.checkpointed) checkpointer.caughtUp();
      return true;
    },
    observeQueries: timing.observe,
    async close() {
      await checkpointer?.stop();
      await db.destroy();
      // Kysely closes the handle only if it ever ran a query: the direct path (direct.ts) may have run them all.
      if (handle.open) handle.close();
    },
  };
}

export function ignoreClientErrors(client: pg.PoolClient): void {
  client.on('error', () => {});
}

function openPostgres(url: string, options: StoreOptions): Store {
  const pgConfig: pg.ClientConfig = {
    connectionString: url,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  };
  const pool = new pg.Pool({
    ...pgConfig,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: 2000,
    idleTimeoutMillis: 30_000,
  });
  // A dropped connection must not crash the process; the next query reports the outage. The pool
  // listens for errors on idle clients only: a client checked out between two queries (a Kysely
  // transaction, a connection being set up) that loses its server emits 'error' on itself, which
  // with no listener is an uncaught exception (a PostgreSQL restart under load took every process
  // down). The pool drops such a client when it is released (it is no longer queryable).
  pool.on('error', () => {});
  pool.on('connect', ignoreClientErrors);
  pool.on('connect', preparesHotShapes);
  const timing = queryTiming();
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log: timing.log });
  return {
    db,
    dialect: 'postgres',
    changes: new ChangeWatcher(undefined),
    pgConfig,
    async ping() {
      await sql`select 1`.execute(db);
    },
    migrate: () => migrate(db as Kysely<unknown>, 'postgres'),
    observeQueries: timing.observe,
    async close() {
      await db.destroy();
    },
  };
}
