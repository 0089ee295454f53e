// Multi-row inserts of a fixed set of columns, compiled once per shape and reused (prepared.ts):
// a group of rows is cut into chunks of a few fixed sizes, so a table has at most four statements
// however many rows a group holds, and SQLite's statement cache (db.ts) is not flooded by a shape
// per group size.
import { sql, type CompiledQuery, type Kysely } from 'kysely';
import { PreparedQuery } from './prepared.ts';
import { directOf, type DirectRun } from './direct.ts';
import type { Database } from './schema.ts';

const CHUNKS = [64, 16, 4, 1] as const;

type Executor = { executeQuery: Kysely<never>['executeQuery'] };

const shapes = new WeakMap<Kysely<Database>, Map<string, PreparedQuery<unknown[], unknown>>>();

/**
 * What an insert does with a row whose key is stored already: nothing (with `returning`, the rows
 * that were new come back), or set `columns` to the new row's values (`replace`) or add them (`add`).
 */
type OnConflict =
  | { key: readonly string[]; action: 'nothing' }
  | { key: readonly string[]; action: 'replace' | 'add'; columns: readonly string[] };

/** Rows for one table, as insertRows takes them. */
export interface RowGroup {
  table: keyof Database;
  columns: readonly string[];
  rows: readonly object[];
  onConflict?: OnConflict;
  /** columns of the rows written, given back (runRows) */
  returning?: readonly string[];
}

type Shape = Omit<RowGroup, 'rows'>;

// Kysely's builder types follow one table; these shapes serve any, so they are built untyped.
interface ConflictTarget {
  columns(key: readonly string[]): { doNothing(): unknown; doUpdateSet(set: Record<string, unknown>): unknown };
}
interface UntypedInsert {
  onConflict(f: (oc: ConflictTarget) => unknown): UntypedInsert;
  returning(columns: readonly string[]): UntypedInsert;
  compile(): CompiledQuery<unknown>;
}

function build(db: Kysely<Database>, group: Shape, rows: number, args: unknown[]): UntypedInsert {
  const { table, columns, onConflict, returning } = group;
  let query = db
    .insertInto(table)
    .values(
      Array.from(
        { length: rows },
        (_, r) => Object.fromEntries(columns.map((c, i) => [c, args[r * columns.length + i]])) as never,
      ),
    ) as unknown as UntypedInsert;
  if (onConflict)
    query = query.onConflict((oc) => {
      const target = oc.columns(onConflict.key);
      if (onConflict.action === 'nothing') return target.doNothing();
      const value = (c: string) =>
        onConflict.action === 'add'
          ? sql`${sql.ref(`${table}.${c}`)} + ${sql.ref(`excluded.${c}`)}`
          : sql.ref(`excluded.${c}`);
      return target.doUpdateSet(Object.fromEntries(onConflict.columns.map((c) => [c, value(c)])));
    });
  return returning ? query.returning(returning) : query;
}

function shape(db: Kysely<Database>, group: Shape, rows: number): PreparedQuery<unknown[], unknown> {
  let byKey = shapes.get(db);
  if (!byKey) shapes.set(db, (byKey = new Map()));
  const { table, columns, onConflict, returning } = group;
  const key = `${table}\n${columns.join(',')}\n${rows}\n${JSON.stringify(onConflict ?? null)}\n${returning?.join(',') ?? ''}`;
  let query = byKey.get(key);
  if (!query) {
    query = new PreparedQuery(db as never, rows * columns.length, (_db, ...args) => build(db, group, rows, args));
    byKey.set(key, query);
  }
  return query;
}

/** The chunks of `rows`, each a compiled shape and its values. */
function* chunks(
  db: Kysely<Database>,
  group: Shape,
  rows: readonly object[],
): Generator<{ query: PreparedQuery<unknown[], unknown>; values: unknown[] }> {
  const { columns } = group;
  let at = 0;
  for (const size of CHUNKS) {
    while (rows.length - at >= size) {
      const values: unknown[] = [];
      for (let r = at; r < at + size; r++) {
        const row = rows[r] as Record<string, unknown>;
        for (const c of columns) values.push(row[c] ?? null);
      }
      yield { query: shape(db, group, size), values };
      at += size;
    }
  }
}

/**
 * Writes `group` through `run`, a direct transaction's (direct.ts `atomically`), in chunks of the
 * fixed sizes; gives back the rows its `returning` names (none without).
 */
export function runRows(db: Kysely<Database>, run: DirectRun, group: RowGroup): unknown[] {
  const out: unknown[] = [];
  for (const { query, values } of chunks(db, group, group.rows)) {
    const { text, parameters } = query.bind(...values);
    const rows = run(text, parameters);
    for (const row of rows) out.push(row);
  }
  return out;
}

/**
 * SQLite with no transaction open: every group's rows in one transaction, synchronously (direct.ts).
 * False, and nothing written, where that cannot be done: the caller inserts through a transaction.
 */
export function insertRowsAtomically(db: Kysely<Database>, groups: readonly RowGroup[]): boolean {
  const direct = directOf(db);
  if (!direct) return false;
  return direct.atomically((run) => {
    for (const group of groups) runRows(db, run, group);
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
  for (const { query, values } of chunks(db, { table, columns }, rows)) await query.executeIn(executor, ...values);
}
