// Event batches through the host's one SQLite writer (audit/host-writer.ts): a cluster worker
// checks and prepares a batch (parsing, validation, the canonical payloads), the primary commits
// it in its group commit with the batches of every worker (each in its own savepoint, as before),
// and the worker answers once that commit is over. A reused event_id comes back as the conflict
// it is (409); anything else that fails the commit fails the batch's request with a 500.
import { EventConflictError } from './event-ids.ts';
import { commitPrepared } from './ingest.ts';
import type { IngestResult, PreparedBatch } from './ingest-batch.ts';
import type { Store } from '../store/db.ts';

/** A prepared batch as it crosses the channel (JSON: the Map as its entries). */
type WireBatch = Omit<PreparedBatch, 'first'> & { first: Array<[string, number]> };
type WireResult = { ok: IngestResult } | { conflicts: Array<{ index: number; eventId: string }> };

export const EVENTS_KIND = 'events';

/** The worker's side: commits a batch through `call` (HostWriter.call). */
export function remoteIngestion(
  call: (kind: string, payload: unknown) => Promise<unknown>,
): (batch: PreparedBatch) => Promise<IngestResult> {
  return async (batch) => {
    const wire: WireBatch = { ...batch, first: [...batch.first] };
    const answer = (await call(EVENTS_KIND, wire)) as WireResult;
    if ('conflicts' in answer) throw new EventConflictError(answer.conflicts);
    return answer.ok;
  };
}

/** The primary's side: the batch into this process's group commit. */
export function ingestionHandler(store: Store): (payload: unknown) => Promise<WireResult> {
  return async (payload) => {
    const wire = payload as WireBatch;
    try {
      return { ok: await commitPrepared(store, { ...wire, first: new Map(wire.first) }) };
    } catch (err) {
      if (err instanceof EventConflictError) return { conflicts: err.conflicts };
      throw err;
    }
  };
}
