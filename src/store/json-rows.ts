// JSON built in the query, in each database's own functions, for features that read a set of rows
// as one column of a larger query.
import { sql, type RawBuilder } from 'kysely';
import type { Store } from './db.ts';

/**
 * A scalar subquery: one JSON object per row of `from` (a `from … where …` fragment), keyed as
 * `fields`, as the text of one JSON array; null or '[]' when there are none.
 */
export function jsonRowsSql(
  store: Store,
  fields: Record<string, RawBuilder<unknown>>,
  from: RawBuilder<unknown>,
): RawBuilder<string | null> {
  const pairs = sql.join(Object.entries(fields).flatMap(([key, value]) => [sql.lit(key), value]));
  return store.dialect === 'postgres'
    ? sql<string | null>`(select cast(json_agg(json_build_object(${pairs})) as text) ${from})`
    : sql<string | null>`(select json_group_array(json_object(${pairs})) ${from})`;
}
