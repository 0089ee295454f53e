// PostgreSQL's counterpart of SQLite's direct transaction (row-inserts.ts insertRowsAtomically):
// rows for several tables written by one statement, so a group of decisions and the reviews they
// open cost one round trip instead of BEGIN, an insert per chunk and table, and COMMIT.
//
// The statement is one INSERT per table, all but the last in data-modifying WITH clauses
// (PostgreSQL's documentation, "Data-Modifying Statements in WITH"): one statement is one
// transaction, so its inserts commit together or not at all, and node-postgres resolves the query
// only at ReadyForQuery, after the commit (with synchronous_commit on, after the WAL is flushed).
// The inserts run in no set order, but a foreign key between the tables holds: its check runs at
// the end of the statement, with every table's rows in. Each table's rows travel as one JSON array
// read by json_populate_recordset against the table's own row type, so the text is the same however
// many rows a group holds: one named prepared statement (prepared.ts), parsed and planned once per
// connection.
import { sql, type Kysely } from 'kysely';
import { dialectOf } from './dialect.ts';
import { PreparedQuery } from './prepared.ts';
import type { RowGroup } from './row-inserts.ts';
import type { Database } from './schema.ts';

type Executor = { executeQuery: Kysely<never>['executeQuery'] };

const statements = new WeakMap<Kysely<Database>, Map<string, PreparedQuery<string[], unknown>>>();

function statement(db: Kysely<Database>, groups: readonly RowGroup[]): PreparedQuery<string[], unknown> {
  let byKey = statements.get(db);
  if (!byKey) statements.set(db, (byKey = new Map()));
  const key = groups.map((g) => `${g.table}(${g.columns.join(',')})`).join(';');
  let query = byKey.get(key);
  if (!query) {
    query = new PreparedQuery<string[], unknown>(db as never, groups.length, (_db, ...args) => {
      const inserts = groups.map(({ table, columns }, i) => {
        const names = sql.join(columns.map((c) => sql.ref(c)));
        return sql`insert into ${sql.table(table)} (${names}) select ${names} from json_populate_recordset(null::${sql.table(table)}, ${args[i]})`;
      });
      const withs = inserts.slice(0, -1).map((insert, i) => sql`${sql.raw(`g${i}`)} as (${insert})`);
      const last = inserts[inserts.length - 1]!;
      return (withs.length > 0 ? sql`with ${sql.join(withs)} ${last}` : last).compile(db);
    });
    byKey.set(key, query);
  }
  return query;
}

// A lone surrogate (half of a UTF-16 pair) becomes U+FFFD, as node-postgres's UTF-8 encoding of a
// bound parameter makes it; in JSON text (JSON.stringify escapes it as \udXXX) PostgreSQL refuses it.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const wellFormed = (_key: string, value: unknown) =>
  typeof value === 'string' ? value.replace(LONE_SURROGATE, '\ufffd') : value;

/** A table's rows as the JSON array the statement reads: the group's columns only, a missing value null. */
function rowsJson({ columns, rows }: RowGroup): string {
  const picked = rows.map((row) => {
    const out: Record<string, unknown> = {};
    for (const c of columns) out[c] = (row as Record<string, unknown>)[c] ?? null;
    return out;
  });
  const text = JSON.stringify(picked);
  // JSON.stringify writes \ud only for a lone surrogate, or a backslash before "ud" in the text (rare either way)
  return text.includes('\\ud') ? JSON.stringify(picked, wellFormed) : text;
}

/**
 * PostgreSQL: every group's rows inserted by one statement on `executor` (the store, where the
 * statement is its own transaction, or a transaction of it to join), in the order given (a row
 * may refer to one of an earlier group). Undefined, and nothing written, on any other store: the
 * caller writes the rows its own way. A group's `onConflict` and `returning` are not supported.
 */
export function insertRowsInOneStatement(
  db: Kysely<Database>,
  groups: readonly RowGroup[],
  executor: Executor = db,
): Promise<void> | undefined {
  if (dialectOf(db) !== 'postgres' || groups.length === 0) return undefined;
  if (groups.some((g) => g.onConflict || g.returning)) throw new Error('one statement: plain inserts only');
  return statement(db, groups)
    .executeIn(executor, ...groups.map(rowsJson))
    .then(() => undefined);
}
