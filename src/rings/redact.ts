// What of a ring graph a non-admin may see (docs/api.md, "Rings"; issue 29 item 12). Entities and
// identifiers are shared by every client of an environment, so the graph of one client's
// counterparty reaches accounts and identifiers only other clients sent. The structure (how many
// accounts, how far, which are flagged) is what the score already uses and stays; the names are
// another client's data and go: an entity id the caller's client never sent (no event about it,
// no score of it) becomes a placeholder, and an identifier hash it never sent in an event's
// linked_identifiers becomes null. The entity the caller asked about is always named: it sent it.
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';
import type { Ring } from '../model/ring.ts';
import { subjectsDecidedFor } from '../audit/decision-history-repository.ts';
import { entitiesWithEventsFrom, linkingPayloadsFrom } from '../entities/event-repository.ts';

/**
 * Events read to learn which identifiers the client linked: past this many, the rest count as
 * not sent (their hashes are withheld, never shown by mistake), so a client with a huge history
 * costs a bounded read.
 */
const LINK_EVENTS_READ = 10_000;

const linkKey = (type: string, hash: string): string => `${type}\u0000${hash}`;

/** Of `ids`, those the client sent events about or scored (indexed reads by entity). */
async function entitiesSent(
  db: Kysely<Database>,
  env: Environment,
  clientId: string,
  ids: string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const [events, decisions] = await Promise.all([
    entitiesWithEventsFrom(db, env, clientId, ids),
    subjectsDecidedFor(db, env, clientId, ids),
  ]);
  return new Set([...events.map((r) => r.entity_id), ...decisions.map((r) => r.subject_id)]);
}

/** The identifiers the client linked, in its own events, to the entities it sent. */
async function identifiersSent(
  db: Kysely<Database>,
  env: Environment,
  clientId: string,
  entities: string[],
): Promise<Set<string>> {
  const out = new Set<string>();
  if (entities.length === 0) return out;
  const rows = await linkingPayloadsFrom(db, env, clientId, entities, LINK_EVENTS_READ);
  for (const { payload } of rows) {
    let links: unknown;
    try {
      links = (JSON.parse(payload) as { linked_identifiers?: unknown }).linked_identifiers;
    } catch {
      continue;
    }
    if (!Array.isArray(links)) continue;
    for (const l of links as Array<{ type?: unknown; hash?: unknown }>) {
      if (typeof l?.type === 'string' && typeof l.hash === 'string') out.add(linkKey(l.type, l.hash));
    }
  }
  return out;
}

/**
 * The graph as a non-admin of `clientId` may see it: the names it never sent replaced (entity ids
 * by `redacted-<n>`, stable within the answer, hashes by null). An admin's graph is `ring` as read.
 */
export async function redactRing(
  db: Kysely<Database>,
  env: Environment,
  ring: Ring,
  clientId: string,
): Promise<RedactedRing> {
  const others = ring.nodes.map((n) => n.entityId).filter((id) => id !== ring.root);
  const known = await entitiesSent(db, env, clientId, others);
  known.add(ring.root);
  const links = await identifiersSent(db, env, clientId, [...known]);
  const names = new Map<string, string>();
  let hidden = 0;
  const placeholder = (): string => {
    // An entity may be named anything, even like a placeholder: never give two nodes one name.
    let candidate: string;
    do candidate = `redacted-${++hidden}`;
    while (known.has(candidate));
    return candidate;
  };
  for (const n of ring.nodes) names.set(n.entityId, known.has(n.entityId) ? n.entityId : placeholder());
  const name = (id: string) => names.get(id) ?? id;
  const hash = (type: string, h: string) => (links.has(linkKey(type, h)) ? h : null);
  return {
    root: ring.root,
    nodes: ring.nodes.map((n) => ({ ...n, entityId: name(n.entityId), redacted: !known.has(n.entityId) })),
    edges: ring.edges.map((e) => ({ from: name(e.from), to: name(e.to), type: e.type, hash: hash(e.type, e.hash) })),
    hubs: ring.hubs.map((h) => ({ ...h, hash: hash(h.type, h.hash) })),
    truncated: ring.truncated,
  };
}

/** A ring whose names the caller may not see are withheld. */
export interface RedactedRing {
  root: string;
  nodes: Array<Ring['nodes'][number] & { redacted: boolean }>;
  edges: Array<{ from: string; to: string; type: string; hash: string | null }>;
  hubs: Array<{ type: string; hash: string | null; entities: number }>;
  truncated: boolean;
}

/** An admin's view: every name, nothing redacted. */
export const unredacted = (ring: Ring): RedactedRing => ({
  ...ring,
  nodes: ring.nodes.map((n) => ({ ...n, redacted: false })),
});
