// LIKE for "the column contains this text", the same on SQLite and PostgreSQL: the text's own `\`,
// `%` and `_` escaped with a backslash, named as the escape character. A filter only (SQLite's LIKE
// ignores ASCII case), so callers check each row they find exactly.
import { sql, type RawBuilder } from 'kysely';

/** The LIKE pattern of "contains `text`". */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** `column like pattern escape '\'`, for a pattern made by containsPattern. */
export function likeEscaped(column: string, pattern: string): RawBuilder<boolean> {
  return sql<boolean>`${sql.ref(column)} like ${pattern} escape '\\'`;
}
