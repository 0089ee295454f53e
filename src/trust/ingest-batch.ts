// One event batch as ingestion stores it (ingest.ts): what the request checked and prepared, and
// the steps both ways of storing it share — through Kysely in a transaction (ingest.ts) and, on
// SQLite, synchronously on the direct path (ingest-direct.ts) — so the two cannot drift apart.
import type { Environment } from '../lib/principal.ts';
import type { Policy } from '../model/policy.ts';
import { batchEventIds } from './event-ids.ts';
import type { TrustEvent } from './schemas.ts';
import type { Pending } from './aggregate-state.ts';
import { applyEvent, DAY_MS, mirroredParty } from './apply-event.ts';

export interface IngestResult {
  accepted: number;
  duplicates: number;
}

/** One batch, checked and ready to store. */
export interface PreparedBatch {
  events: TrustEvent[];
  payloads: string[];
  first: Map<string, number>;
  /** the policy's decay half-life */
  halfLifeMs: number;
  /** the policy's maxIdentifierFanout: entity.flagged never fans out through a hub */
  fanout: number;
  environment: Environment;
  clientId: string;
  now: number;
}

export interface IngestOptions {
  /** the partition every row read and written belongs to (docs/api.md, "Integration" test mode) */
  environment: Environment;
  /** the client whose event ids these are; '' for events without a known owner (CLI import) */
  clientId?: string;
  now?: number;
}

/** Throws EventConflictError when the batch uses one event_id for two different events. */
export function prepareBatch(events: TrustEvent[], policy: Policy, options: IngestOptions): PreparedBatch {
  const { payloads, first } = batchEventIds(events);
  return {
    events,
    payloads,
    first,
    halfLifeMs: policy.decayHalfLifeDays * DAY_MS,
    fanout: policy.maxIdentifierFanout,
    environment: options.environment,
    clientId: options.clientId ?? '',
    now: options.now ?? Date.now(),
  };
}

export type Accepted = { ev: TrustEvent; t: number };

/** Each event id's first event, in event_id order: concurrent batches sharing events lock them in the same order. */
export function inIdOrder({ events, first }: PreparedBatch): number[] {
  return [...first.values()].sort((a, b) =>
    events[a]!.event_id < events[b]!.event_id ? -1 : events[a]!.event_id > events[b]!.event_id ? 1 : 0,
  );
}

/** The events stored now (not duplicates), in time order: the order their changes apply in. */
export function acceptedInTimeOrder({ events, first }: PreparedBatch, fresh: ReadonlySet<string>): Accepted[] {
  return [...first.values()]
    .filter((i) => fresh.has(events[i]!.event_id))
    .map((i) => ({ ev: events[i]!, t: Date.parse(events[i]!.occurred_at) }))
    .sort((a, b) => a.t - b.t);
}

/** The entities the accepted events change (disputes change both parties), sorted: one global order. */
export function touchedEntities(accepted: readonly Accepted[]): string[] {
  return [...new Set(accepted.flatMap((a) => [a.ev.entity_id, mirroredParty(a.ev) ?? a.ev.entity_id]))].sort();
}

/** The accepted events applied, in time order, to the state loaded for them: the rows to write back. */
export function applyAccepted(
  state: Pick<Pending, 'environment' | 'entities' | 'currencies' | 'wasFlagged'>,
  accepted: readonly Accepted[],
  batch: PreparedBatch,
): Pending {
  const pending: Pending = { ...state, buckets: new Map(), counterparties: new Map(), identifiers: new Map() };
  for (const { ev, t } of accepted) applyEvent(pending, ev, t, batch.now, batch.halfLifeMs);
  return pending;
}
