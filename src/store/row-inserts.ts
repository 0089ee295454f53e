// Multi-row inserts of a fixed set of columns, compiled once per shape and reused (prepared.ts):
// a group of rows is cut into chunks of a few fixed sizes, so a table has at most four statements
// however many rows a group holds, and SQLite's statement cache (db.ts) is not flooded by a shape
// per group size.
import type { Kysely } from 'kysely';
import { PreparedQuery } from './prepared.ts';
import { directOf } from './direct.ts';
import type { Database } from './schema.ts';

const CHUNKS = [64, 16, 4, 1] as const;

type Executor = { executeQuery: Kysely<never>['executeQuery'] };

const shapes = new WeakMap<Kysely<Database>, Map<string, PreparedQuery<unknown[], unknown>>>();

function shape(
  db: Kysely<Database>,
  table: keyof Database,
  columns: readonly string[],
  rows: number,
): PreparedQuery<unknown[], unknown> {
  let byKey = shapes.get(db);
  if (!byKey) shapes.set(db, (byKey = new Map()));
  const key = `${table}\n${columns.join(',')}\n${rows}`;
  let query = byKey.get(key);
  if (!query) {
    query = new PreparedQuery(db as never, rows * columns.length, (_db, ...args) =>
      db
        .insertInto(table)
        .values(
          Array.from(
            { length: rows },
            (_, r) => Object.fromEntries(columns.map((c, i) => [c, args[r * columns.length + i]])) as never,
          ),
        ),
    );
    byKey.set(key, query);
  }
  return query;
}

/** Rows for one table, as insertRows takes them. */
export interface RowGroup {
  table: keyof Database;
  columns: readonly string[];
  rows: readonly object[];
}

/** The chunks of `rows`, each a compiled shape and its values. */
function* chunks(
  db: Kysely<Database>,
  table: keyof Database,
  columns: readonly string[],
  rows: readonly object[],
): Generator<{ query: PreparedQuery<unknown[], unknown>; values: unknown[] }> {
  let at = 0;
  for (const size of CHUNKS) {
    while (rows.length - at >= size) {
      const values: unknown[] = [];
      for (let r = at; r < at + size; r++) {
        const row = rows[r] as Record<string, unknown>;
        for (const c of columns) values.push(row[c] ?? null);
      }
      yield { query: shape(db, table, columns, size), values };
      at += size;
    }
  }
}

/**
 * SQLite with no transaction open: every group's rows in one transaction, synchronously (direct.ts).
 * False, and nothing written, where that cannot be done: the caller inserts through a transaction.
 */
export function insertRowsAtomically(db: Kysely<Database>, groups: readonly RowGroup[]): boolean {
  const direct = directOf(db);
  if (!direct) return false;
  return direct.atomically((run) => {
    for (const group of groups)
      for (const { query, values } of chunks(db, group.table, group.columns, group.rows)) {
        const { text, parameters } = query.bind(...values);
        run(text, parameters);
      }
  });
}

/**
 * Inserts `rows` (each a record holding `columns`; a missing value is NULL) into `table` through
 * `executor` (the store, or a transaction of it to join), in chunks of the fixed sizes.
 */
export async function insertRows<T extends object>(
  db: Kysely<Database>,
  executor: Executor,
  table: keyof Database,
  columns: readonly (keyof T & string)[],
  rows: readonly T[],
): Promise<void> {
  for (const { query, values } of chunks(db, table, columns, rows)) await query.executeIn(executor, ...values);
}
