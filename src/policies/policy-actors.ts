// A policy version's creator and activator, named (docs/api.md, "Policies" and "Audit log", "Who"):
// the row keeps principal ids (`created_by`, `activated_by`), and the rows a read answers carry
// the actors resolved for the whole page at once, so a renamed person shows their current name.
// route-support.ts policyRecord answers them; a row read without them names each id by itself.
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Actor } from '../lib/principal.ts';
import { actorIn, resolveActors } from '../audit-log/actors.ts';

/** What namePolicies adds to a row: not columns, never written back. */
export interface PolicyActors {
  created_by_actor?: Actor | null;
  activated_by_actor?: Actor | null;
}

/** The columns naming reads (a policies row, repository.ts's PolicyRow, has them). */
type ActedRow = PolicyActors & { created_by: string | null; activated_by: string | null };

/** The rows with their creators and activators named: one lookup per table for the page. */
export async function namePolicies<T extends ActedRow>(db: Kysely<Database>, rows: T[]): Promise<T[]> {
  const actors = await resolveActors(
    db,
    rows.flatMap((r) => [r.created_by, r.activated_by]),
  );
  for (const row of rows) {
    row.created_by_actor = actorIn(actors, row.created_by);
    row.activated_by_actor = actorIn(actors, row.activated_by);
  }
  return rows;
}

/** One row, named. */
export async function namePolicy<T extends ActedRow>(db: Kysely<Database>, row: T): Promise<T> {
  return (await namePolicies(db, [row]))[0]!;
}

/** The policy's actors as its record answers them: resolved when the read named them, else each id by itself. */
export function policyActors(row: ActedRow): { created_by_actor: Actor | null; activated_by: Actor | null } {
  const none = new Map<string, Actor>();
  return {
    created_by_actor: row.created_by_actor !== undefined ? row.created_by_actor : actorIn(none, row.created_by),
    activated_by: row.activated_by_actor !== undefined ? row.activated_by_actor : actorIn(none, row.activated_by),
  };
}
