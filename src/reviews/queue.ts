// The review queue (docs/api.md, "Reviews"): its pages, their cursors, and reading one, with who
// resolved each named (claims.ts claims and releases). The queries are repository.ts's.
import type { Kysely, Transaction } from 'kysely';
import type { Database, ReviewsTable } from '../store/schema.ts';
import { pageOf, type Page } from '../lib/pagination.ts';
import { resolveActors } from '../audit-log/actors.ts';
import type { ReviewJoined } from './schemas.ts';
import { reviewById, reviewRows, type ListFilter, type Position, type Viewer } from './repository.ts';

type Db = Kysely<Database> | Transaction<Database>;

export function decodeCursor(cursor: string): Position | undefined {
  const match = /^([ur])\.([0-9]{1,16})\.([A-Za-z0-9_]{1,64})$/.exec(cursor);
  return match ? { phase: match[1] as 'u' | 'r', at: Number(match[2]), id: match[3]! } : undefined;
}

export function cursorOf(row: ReviewsTable): string {
  return row.status === 'resolved' ? `r.${Number(row.resolved_at)}.${row.id}` : `u.${Number(row.due_at)}.${row.id}`;
}

/** One page of the queue; `after` must come from decodeCursor. */
export async function listReviews(
  db: Db,
  viewer: Viewer,
  filter: ListFilter,
  after: Position | undefined,
): Promise<Page<ReviewJoined>> {
  const rows = await reviewRows(db, viewer, filter, after);
  return pageOf(await withResolvers(db, rows), filter.limit);
}

export async function findReview(db: Db, viewer: Viewer, id: string): Promise<ReviewJoined | undefined> {
  const row = await reviewById(db, viewer, id);
  return row && (await withResolvers(db, [row]))[0];
}

/** The rows with who resolved them named, one lookup for the page (docs/api.md, "Audit log", "Who"). */
async function withResolvers(db: Db, rows: ReviewJoined[]): Promise<ReviewJoined[]> {
  const actors = await resolveActors(
    db,
    rows.map((r) => r.resolved_by),
  );
  for (const row of rows)
    row.resolved_by_actor = row.resolved_by === null ? null : (actors.get(row.resolved_by) ?? null);
  return rows;
}
