// Event ids belong to the client that sends them (docs/api.md, "Trust scoring", migration 003_event_scope): the same
// id with the same payload is a duplicate; with a different payload it is a conflict that fails the
// whole batch. Payloads are compared as canonical JSON, so key order does not matter.
import type { Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import { chunks } from '../store/chunks.ts';
import { canonicalJson } from './cache.ts';
import type { TrustEvent } from './schemas.ts';
import type { Environment } from '../lib/principal.ts';
import { insertNewEvents, storedPayloads } from '../entities/event-repository.ts';

/** An event id this client already used for a different event (or twice in one batch, differently). */
export class EventConflictError extends Error {
  constructor(readonly conflicts: Array<{ index: number; eventId: string }>) {
    super('event_id reused for a different event');
  }
}

/**
 * The event as compared for idempotency: keys sorted (canonical JSON), the time as one RFC 3339
 * spelling, linked identifiers in one order, so a retry that serialises `…00Z` as `…00.000Z` or
 * lists the same identifiers in another order is the same event, not a conflict.
 */
function comparable(event: TrustEvent): string {
  const at = Date.parse(event.occurred_at);
  const linked =
    event.linked_identifiers &&
    [...event.linked_identifiers].sort((a, b) =>
      a.type === b.type ? (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0) : a.type < b.type ? -1 : 1,
    );
  return canonicalJson({
    ...event,
    ...(Number.isFinite(at) ? { occurred_at: new Date(at).toISOString() } : {}),
    ...(linked ? { linked_identifiers: linked } : {}),
  });
}

/**
 * Each event's canonical payload and the index of each id's first occurrence; throws
 * EventConflictError when one batch uses an id for two different events (naming the later ones).
 */
export function batchEventIds(events: readonly TrustEvent[]): { payloads: string[]; first: Map<string, number> } {
  const payloads = events.map(comparable);
  const first = new Map<string, number>();
  const conflicts: Array<{ index: number; eventId: string }> = [];
  events.forEach((ev, i) => {
    const seenAt = first.get(ev.event_id);
    if (seenAt === undefined) first.set(ev.event_id, i);
    else if (payloads[seenAt] !== payloads[i]) conflicts.push({ index: i, eventId: ev.event_id });
  });
  if (conflicts.length > 0) throw new EventConflictError(conflicts);
  return { payloads, first };
}

/** Stored payloads are in comparable form since 003_event_scope; older ones are brought to it. */
function samePayload(stored: string, canonical: string): boolean {
  if (stored === canonical) return true;
  try {
    return comparable(JSON.parse(stored) as TrustEvent) === canonical;
  } catch {
    return false;
  }
}

/**
 * Inserts the batch's raw events (each id once, in `ordered` order, so concurrent batches lock
 * shared ids in one order) and returns the ids that are new. An id already stored is a duplicate
 * when its payload is the same; otherwise EventConflictError names every such event.
 */
export async function insertEventRows(
  trx: Transaction<Database>,
  environment: Environment,
  events: readonly TrustEvent[],
  payloads: readonly string[],
  first: ReadonlyMap<string, number>,
  ordered: readonly number[],
  clientId: string,
  now: number,
): Promise<Set<string>> {
  const fresh = new Set<string>();
  for (const batch of chunks(ordered)) {
    const inserted = await insertNewEvents(
      trx,
      batch.map((i) => eventRow(environment, clientId, events[i]!, payloads[i]!, now)),
    );
    for (const r of inserted) fresh.add(r.event_id);
  }
  const stored: Array<{ event_id: string; payload: string }> = [];
  for (const ids of chunks([...first.keys()].filter((id) => !fresh.has(id)))) {
    stored.push(...(await storedPayloads(trx, environment, clientId, ids)));
  }
  throwConflicts(stored, first, payloads);
  return fresh;
}

/** The events row of one event. */
export function eventRow(environment: Environment, clientId: string, ev: TrustEvent, payload: string, now: number) {
  return {
    environment,
    client_id: clientId,
    event_id: ev.event_id,
    entity_id: ev.entity_id,
    type: ev.type,
    occurred_at: Date.parse(ev.occurred_at),
    payload,
    ingested_at: now,
  };
}

/** Throws EventConflictError naming every batch event whose id is stored with another payload. */
export function throwConflicts(
  stored: ReadonlyArray<{ event_id: string; payload: string }>,
  first: ReadonlyMap<string, number>,
  payloads: readonly string[],
): void {
  const conflicts: Array<{ index: number; eventId: string }> = [];
  for (const row of stored) {
    const index = first.get(row.event_id)!;
    if (!samePayload(row.payload, payloads[index]!)) conflicts.push({ index, eventId: row.event_id });
  }
  if (conflicts.length > 0) throw new EventConflictError(conflicts.sort((a, b) => a.index - b.index));
}
