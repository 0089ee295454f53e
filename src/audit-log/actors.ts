// Who changed a record, named (docs/api.md, "Audit log", "Who"): the records keep the acting
// principal's id only (a rule's `updated_by`, a list entry's `added_by`, a policy's
// `activated_by`, …), and a read answers it as an actor `{type, id, name}` resolved here, at read
// time, so a renamed person or key shows their current name (docs/decisions.md, 2026-11-29).
// One query per table for a whole page of ids, never one per record.
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Actor } from '../lib/principal.ts';
import { chunks } from '../store/chunks.ts';

/** What the command line records as its principal (auditor.ts cliActor); the account is not kept. */
const CLI_ACTOR_ID = 'cli';

/** An id found in no table (a deleted client, a name `vouch lists import --by` wrote): a client named by its id. */
const unknownActor = (id: string): Actor => ({ type: 'client', id, name: id });

export type Actors = ReadonlyMap<string, Actor>;

/**
 * The actors of every id given, one query per table (users, API keys, clients); `db` may be a
 * transaction. A deactivated user or key is still found by name; null and undefined are skipped.
 */
export async function resolveActors(
  db: Kysely<Database>,
  ids: Iterable<string | null | undefined>,
): Promise<Map<string, Actor>> {
  const wanted = [...new Set([...ids].filter((id): id is string => typeof id === 'string' && id !== ''))];
  const actors = new Map<string, Actor>();
  if (wanted.includes(CLI_ACTOR_ID)) actors.set(CLI_ACTOR_ID, { type: 'client', id: CLI_ACTOR_ID, name: 'vouch cli' });
  const rest = wanted.filter((id) => id !== CLI_ACTOR_ID);
  if (rest.length === 0) return actors;
  // In turn, not at once: `db` may be a transaction, which holds one connection. A page's ids are
  // few distinct principals, so one slice is the usual case.
  for (const slice of chunks(rest)) {
    const clients = await db.selectFrom('clients').select(['id', 'name']).where('id', 'in', slice).execute();
    const keys = await db.selectFrom('api_keys').select(['id', 'name']).where('id', 'in', slice).execute();
    const users = await db.selectFrom('users').select(['id', 'name']).where('id', 'in', slice).execute();
    for (const c of clients) actors.set(c.id, { type: 'client', id: c.id, name: c.name });
    for (const k of keys) actors.set(k.id, { type: 'client', id: k.id, name: k.name });
    for (const u of users) actors.set(u.id, { type: 'user', id: u.id, name: u.name });
  }
  for (const id of rest) if (!actors.has(id)) actors.set(id, unknownActor(id));
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

/**
 * The principal id the newest entry of `action` on `target` names: read back inside the change's
 * own transaction right after its entry is written, it is who made the change, whichever way it
 * came (a request, an approval on behalf of its requester, the command line), so a record keeps the
 * same actor its audit entry does. Undefined when the change wrote no entry.
 */
export async function auditedActorId(
  db: Kysely<Database>,
  action: string,
  target: string,
): Promise<string | undefined> {
  const entry = await db
    .selectFrom('audit_log')
    .select('actor_id')
    .where('action', '=', action)
    .where('target', '=', target)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  return entry?.actor_id;
}
