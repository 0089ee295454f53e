// Event ingestion. A batch is all or nothing: the raw events (idempotent by the client's event_id)
// and every aggregate they change, so a score never scans raw history and a 200 means all of it is
// stored. Aggregates are read once per batch, updated in memory in time order, and written back.
// The transaction touches only the batch's own entities and the identifiers they hold, so it stays
// short however widely an identifier is shared, and never holds the write lock for long.
import { labelFromEvents } from '../audit/labels.ts';
import type { Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Store } from '../store/db.ts';
import { retriedTransaction, writesRunOneAtATime } from '../store/write-concurrency.ts';
import type { Policy } from '../model/policy.ts';
import type { TrustEvent } from './schemas.ts';
import { insertEventRows } from './event-ids.ts';
import { announceFlags, flagFacts } from '../webhooks/events.ts';
import { GroupCommitQueue } from './ingest-queue.ts';
import { loadState, writeState } from './aggregate-state.ts';
import { BUCKET_MS } from './apply-event.ts';
import {
  acceptedInTimeOrder,
  applyAccepted,
  inIdOrder,
  prepareBatch,
  touchedEntities,
  type IngestOptions,
  type IngestResult,
  type PreparedBatch,
} from './ingest-batch.ts';
import { commitDirectly } from './ingest-direct.ts';

/**
 * Stores a batch, all or nothing. Event ids are the client's own: the same id with the same
 * payload (compared canonically, so key order does not matter) is a duplicate; with a different
 * one the whole batch fails with EventConflictError and nothing is stored.
 *
 * Where the store runs one write transaction at a time (SQLite), batches that arrive together share
 * one transaction and one commit (ingest-queue.ts), each in its own savepoint, stored synchronously
 * on the driver when nothing else holds the connection (ingest-direct.ts); otherwise
 * (PostgreSQL) each batch is its own transaction, run again when the server reports a deadlock or
 * serialization failure.
 */
export async function ingestEvents(
  store: Store,
  events: TrustEvent[],
  policy: Policy,
  options: IngestOptions,
): Promise<IngestResult> {
  const batch = prepareBatch(events, policy, options);
  if (writesRunOneAtATime(store)) {
    const host = hostWriters.get(store);
    if (!host) return commitPrepared(store, batch);
    const result = await host(batch);
    if (result.accepted > 0) store.changes.localWrite();
    return result;
  }
  // A batch is all or nothing and idempotent, so running it again is safe.
  const result = await retriedTransaction(store, (trx) => ingestInTransaction(trx, batch, true));
  if (result.accepted > 0) store.changes.localWrite();
  return result;
}

const queues = new WeakMap<Store, GroupCommitQueue<PreparedBatch, IngestResult>>();
/** A cluster worker's: its batches commit in the host's writer (trust/ingest-host.ts). */
const hostWriters = new WeakMap<Store, (batch: PreparedBatch) => Promise<IngestResult>>();

/** From now on this store's batches are committed by `commit` (the host's writer) instead of here. */
export function ingestThrough(store: Store, commit: (batch: PreparedBatch) => Promise<IngestResult>): void {
  hostWriters.set(store, commit);
}

/** Commits a prepared batch here, in this process's group commit (SQLite): the host writer's side. */
export function commitPrepared(store: Store, batch: PreparedBatch): Promise<IngestResult> {
  return ingestQueue(store).submit(batch);
}

/** The store's group-commit queue (SQLite): one per store, so every caller's batches share it. */
function ingestQueue(store: Store): { submit(batch: PreparedBatch): Promise<IngestResult> } {
  let queue = queues.get(store);
  if (!queue) {
    queue = new GroupCommitQueue<PreparedBatch, IngestResult>(
      store.db,
      (trx, batch) => ingestInTransaction(trx, batch, false),
      (results) => {
        // Cached scores in this process are checked against this before they are served.
        if (results.some((r) => r.accepted > 0)) store.changes.localWrite();
      },
      {
        ...(store.checkpointIfDue
          ? {
              between: async () => {
                await store.checkpointIfDue!();
              },
            }
          : {}),
        direct: (batches) => commitDirectly(store.db, batches),
      },
    );
    queues.set(store, queue);
  }
  const q = queue;
  return { submit: (batch) => q.submit(batch, batch.events.length) };
}

/**
 * Stores one batch inside the caller's transaction. `lockEntities` (transactions side by side) takes the batch's
 * entity rows in one global order first, so concurrent batches wait rather than deadlock.
 */
async function ingestInTransaction(
  trx: Transaction<Database>,
  batch: PreparedBatch,
  lockEntities: boolean,
): Promise<IngestResult> {
  const { events, payloads, first, fanout, environment, clientId, now } = batch;
  // Throws EventConflictError: the batch's other events roll back with it.
  const fresh = await insertEventRows(trx, environment, events, payloads, first, inIdOrder(batch), clientId, now);
  const accepted = acceptedInTimeOrder(batch, fresh);
  if (accepted.length > 0) {
    const state = await loadState(trx, environment, touchedEntities(accepted), lockEntities);
    await writeState(trx, applyAccepted({ environment, ...state }, accepted, batch), Math.floor(now / BUCKET_MS));
    // Outcome events label the decisions of their trade (docs/api.md, "Outcomes and labels"), in this transaction.
    await labelFromEvents(
      trx,
      environment,
      accepted.map((a) => a.ev),
      clientId,
      now,
    );
    // entity.flagged webhooks: one fan-out row in this transaction, expanded by the webhook worker
    // (src/webhooks/fanout.ts).
    await announceFlags(trx, environment, clientId, flagFacts(accepted.map((a) => a.ev)), fanout);
  }
  return { accepted: accepted.length, duplicates: events.length - accepted.length };
}
