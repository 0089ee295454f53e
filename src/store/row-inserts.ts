// Multi-row inserts of a fixed set of columns, compiled once per shape and reused (prepared.ts):
// a group of rows is cut into chunks of a few fixed sizes, so a table has at most four statements
// however many rows a group holds, and SQLite's statement cache (db.ts) is not flooded by a shape
// per group size.
import type { Kysely } from 'kysely';
import { PreparedQuery } from './prepared.ts';
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
  let at = 0;
  for (const size of CHUNKS) {
    while (rows.length - at >= size) {
      const values: unknown[] = [];
      for (let r = at; r < at + size; r++) {
        const row = rows[r] as Record<string, unknown>;
        for (const c of columns) values.push(row[c] ?? null);
      }
      await shape(db, table, columns, size).executeIn(executor, ...values);
      at += size;
    }
  }
}
