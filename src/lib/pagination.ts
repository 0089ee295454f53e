// Cursor pagination of "newest first" listings (each list's `next_cursor` in the OpenAPI
// document): a listing reads `limit + 1` rows, the extra one only telling that another page
// follows, and its next_cursor is the sort key of the page's last row, so the next page starts
// strictly after it.

/** One page of a listing: at most `limit` rows, and whether another page follows. */
export interface Page<Row> {
  rows: Row[];
  more: boolean;
}

/** The page of rows read with `limit + 1`. */
export function pageOf<Row>(fetched: readonly Row[], limit: number): Page<Row> {
  return { rows: fetched.slice(0, limit), more: fetched.length > limit };
}

/** The page's next_cursor: the last row's cursor, or null when no page follows. */
export function nextCursor<Row>(page: Page<Row>, cursorOf: (last: Row) => string): string | null {
  const last = page.rows[page.rows.length - 1];
  return page.more && last !== undefined ? cursorOf(last) : null;
}

/** A position in a listing sorted by time, then by a key that breaks ties: `<ms>.<key>`. */
export interface TimeKey {
  at: number;
  key: string;
}

export function encodeTimeKey(position: TimeKey): string {
  return `${position.at}.${position.key}`;
}

/** The position a `<ms>.<key>` cursor names, or undefined when it is not one. */
export function decodeTimeKey(cursor: string): TimeKey | undefined {
  const match = /^([0-9]{1,16})\.(.+)$/s.exec(cursor);
  if (!match) return undefined;
  return { at: Number(match[1]), key: match[2]! };
}
