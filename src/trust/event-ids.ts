// Event ids belong to the client that sends them (CONTRACT §5, migration 003_event_scope): the same
// id with the same payload is a duplicate; with a different payload it is a conflict that fails the
// whole batch. Payloads are compared as canonical JSON, so key order does not matter.
import { canonicalJson } from './cache.ts';
import type { TrustEvent } from './schemas.ts';

/** An event id this client already used for a different event (or twice in one batch, differently). */
export class EventConflictError extends Error {
  constructor(readonly conflicts: Array<{ index: number; eventId: string }>) {
    super('event_id reused for a different event');
  }
}

/**
 * Each event's canonical payload and the index of each id's first occurrence; throws
 * EventConflictError when one batch uses an id for two different events (naming the later ones).
 */
export function batchEventIds(events: readonly TrustEvent[]): { payloads: string[]; first: Map<string, number> } {
  const payloads = events.map((ev) => canonicalJson(ev));
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

/** Stored payloads are canonical JSON since 003_event_scope; older ones are re-canonicalised. */
export function samePayload(stored: string, canonical: string): boolean {
  if (stored === canonical) return true;
  try {
    return canonicalJson(JSON.parse(stored)) === canonical;
  } catch {
    return false;
  }
}
