// Multi-row statements are sent in slices: SQLite caps bound parameters per statement and
// PostgreSQL plans long IN lists poorly, so 200 rows (or ids) at a time keeps both comfortable.

const CHUNK = 200;

export function chunks<T>(items: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
