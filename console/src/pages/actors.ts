// Who changed a record, as a page says it (docs/api.md, "Audit log", "Who"): a record answers the
// principal's id (`updated_by`, `added_by`, …) and, beside it, the actor named as they are now
// (`updated_by_actor`, …). Pages show the name and keep the id for the tooltip; an answer without
// the actor (an older server) shows the id, as pages did before.

export interface ActorRef {
  type: 'user' | 'client';
  id: string;
  name: string;
}

/** The name to show for `id`, from its actor when the answer carries one. */
export const whoName = (actor: ActorRef | null | undefined, id?: string | null): string | undefined =>
  actor?.name ?? id ?? undefined;
