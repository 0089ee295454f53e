// Who changed a record, named (docs/api.md, "Audit log", "Who"): the records keep the acting
// principal's id only (a rule's `updated_by`, a list entry's `added_by`, a policy's
// `activated_by`, …), and a read answers it as an actor `{type, id, name}` resolved here, at read
// time, so a renamed person or key shows their current name (docs/decisions.md, 2026-11-29).
// One query per table for a whole page of ids, never one per record. The tables that hold names
// (clients, API keys, users) belong to features above the audit log; their owners' lookups are
// handed in once by the composition root (src/actor-directory.ts), see docs/architecture.md.
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Actor } from '../lib/principal.ts';
import { chunks } from '../store/chunks.ts';

/** One table's names: the ids of `ids` it holds, each with its name (at most a chunk of ids: store/chunks.ts). */
export interface NameSource {
  type: Actor['type'];
  namesIn(db: Kysely<Database>, ids: readonly string[]): Promise<{ id: string; name: string }[]>;
}

let directory: readonly NameSource[] | undefined;

/**
 * The name sources, read in this order (a later source's name wins for an id two of them hold).
 * Set once per process by the composition root; the sources are pure lookups over the `db` each
 * call passes, so every app and store of a process shares them.
 */
export function useActorNames(sources: readonly NameSource[]): void {
  directory = sources;
}

function nameSources(): readonly NameSource[] {
  if (!directory) throw new Error('actor names are not wired: import src/actor-directory.ts in the entry point');
  return directory;
}

/** What the command line records as its principal (auditor.ts cliActor); the account is not kept. */
const CLI_ACTOR_ID = 'cli';

/** An id found in no table (a deleted client, a name `vouch lists import --by` wrote): a client named by its id. */
const unknownActor = (id: string): Actor => ({ type: 'client', id, name: id });

export type Actors = ReadonlyMap<string, Actor>;

/**
 * The actors of the ids some table holds (the name sources', and the command line's), one query
 * per source; `db` may be a transaction. A deactivated user or key is still found by name; null
 * and undefined are skipped, and an id no table holds is left out.
 */
export async function knownActors(
  db: Kysely<Database>,
  ids: Iterable<string | null | undefined>,
): Promise<Map<string, Actor>> {
  const wanted = [...new Set([...ids].filter((id): id is string => typeof id === 'string' && id !== ''))];
  const actors = new Map<string, Actor>();
  if (wanted.includes(CLI_ACTOR_ID)) actors.set(CLI_ACTOR_ID, { type: 'client', id: CLI_ACTOR_ID, name: 'vouch cli' });
  const rest = wanted.filter((id) => id !== CLI_ACTOR_ID);
  // In turn, not at once: `db` may be a transaction, which holds one connection. A page's ids are
  // few distinct principals, so one slice is the usual case.
  for (const slice of chunks(rest)) {
    for (const source of nameSources()) {
      for (const row of await source.namesIn(db, slice))
        actors.set(row.id, { type: source.type, id: row.id, name: row.name });
    }
  }
  return actors;
}

/** The actors of every id given (knownActors), an id no table holds named by itself. */
export async function resolveActors(
  db: Kysely<Database>,
  ids: Iterable<string | null | undefined>,
): Promise<Map<string, Actor>> {
  const wanted = [...ids];
  const actors = await knownActors(db, wanted);
  for (const id of wanted) if (id && !actors.has(id)) actors.set(id, unknownActor(id));
  return actors;
}

/** The actor of one id out of a resolved page; null for no id (a record nobody changed yet). */
export function actorIn(actors: Actors, id: string): Actor;
export function actorIn(actors: Actors, id: string | null | undefined): Actor | null;
export function actorIn(actors: Actors, id: string | null | undefined): Actor | null {
  if (id === null || id === undefined) return null;
  return actors.get(id) ?? unknownActor(id);
}

/** One actor, for an answer of one record. */
export async function resolveActor(db: Kysely<Database>, id: string): Promise<Actor>;
export async function resolveActor(db: Kysely<Database>, id: string | null | undefined): Promise<Actor | null>;
export async function resolveActor(db: Kysely<Database>, id: string | null | undefined): Promise<Actor | null> {
  return actorIn(await resolveActors(db, [id]), id);
}
