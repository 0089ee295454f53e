// Event batches on SQLite's direct path (store/direct.ts): a group of batches stored by the driver
// synchronously, in one transaction, instead of through Kysely's transaction, whose statements each
// wait on the connection's mutex, the driver and a few promises (most of an event's cost beside
// SQLite itself, docs/benchmarks.md). The guarantees are the Kysely path's (ingest.ts):
// - it runs only when the one connection has no transaction open, and holds it from its first
//   statement to its commit without yielding, so it reads no other transaction's rows and nothing
//   interleaves with it; otherwise the group goes through Kysely and waits its turn;
// - each batch runs in its own savepoint when the group holds several: a batch that fails rolls
//   back alone, and a failed commit fails them all;
// - nothing is answered before the commit: the results are returned after it;
// - an event id already stored is a duplicate with the same payload, else a conflict
//   (event-ids.ts), checked against the rows this transaction sees.
// Batches whose events may label decisions (audit/labels.ts) or announce a flag (webhooks'
// entity.flagged) go through Kysely, where those writes are made.
import type { Kysely } from 'kysely';
import type { Database, EntitiesTable, EntityCurrencyTable, IdentifiersTable } from '../store/schema.ts';
import { directOf, type DirectRun } from '../store/direct.ts';
import type { PreparedQuery } from '../store/prepared.ts';
import { directStatements } from '../entities/direct-repository.ts';
import { runRows } from '../store/row-inserts.ts';
import type { Outcome } from '../lib/group-commit.ts';
import { eventRow, throwConflicts } from './event-ids.ts';
import { blankEntity, BUCKETS_KEPT, entityFromRow, type Pending } from './aggregate-state.ts';
import { BUCKET_MS } from './apply-event.ts';
import { flagChanged, IdentifierDeltas, isFlagged } from './linkage.ts';
import {
  acceptedInTimeOrder,
  applyAccepted,
  inIdOrder,
  touchedEntities,
  type IngestResult,
  type PreparedBatch,
} from './ingest-batch.ts';

/** Event types that neither label a decision nor flag an entity: all a batch may hold to go this way. */
const DIRECT_TYPES: ReadonlySet<string> = new Set([
  'trade.completed',
  'trade.cancelled',
  'dispute.opened',
  'identifier.linked',
  'entity.unblocklisted',
]);

const EVENT_COLUMNS = Object.keys(eventRow('live', '', { event_id: '', occurred_at: '' } as never, '', 0));
const ENTITY_COLUMNS = Object.keys(blankEntity('live', ''));
const ENTITY_KEY = ['environment', 'entity_id'];

type Link = Pick<IdentifiersTable, 'id_type' | 'hash' | 'entity_id'>;

/**
 * Stores `batches` as one group on the direct path: each batch's outcome, once committed; undefined,
 * and nothing run, when this store has no direct path, a transaction is open, or a batch holds an
 * event that must go through Kysely. A failed commit throws (every batch of the group failed).
 */
export function commitDirectly(
  db: Kysely<Database>,
  batches: readonly PreparedBatch[],
): Array<Outcome<IngestResult>> | undefined {
  const direct = directOf(db);
  if (!direct || !batches.every((b) => b.events.every((ev) => DIRECT_TYPES.has(ev.type)))) return undefined;
  let outcomes: Array<Outcome<IngestResult>> = [];
  const ran = direct.atomically((run) => {
    // A group of one needs no savepoint: its failure rolls the transaction back.
    if (batches.length === 1) {
      outcomes = [{ ok: true, result: ingestOne(db, run, batches[0]!) }];
      return;
    }
    outcomes = batches.map((batch) => {
      run('savepoint vouch_batch', []);
      try {
        const result = ingestOne(db, run, batch);
        run('release savepoint vouch_batch', []);
        return { ok: true, result };
      } catch (error) {
        run('rollback to savepoint vouch_batch', []);
        run('release savepoint vouch_batch', []);
        return { ok: false, error };
      }
    });
  });
  return ran ? outcomes : undefined;
}

function ingestOne(db: Kysely<Database>, run: DirectRun, batch: PreparedBatch): IngestResult {
  const s = directStatements(db);
  const one = <A extends unknown[], R>(query: PreparedQuery<A, R>, ...args: A): R[] => {
    const { text, parameters } = query.bind(...args);
    return run(text, parameters) as R[];
  };
  const { events, payloads, first, environment, clientId, now } = batch;
  const inserted = runRows(db, run, {
    table: 'events',
    columns: EVENT_COLUMNS,
    rows: inIdOrder(batch).map((i) => eventRow(environment, clientId, events[i]!, payloads[i]!, now)),
    onConflict: { key: ['environment', 'client_id', 'event_id'], action: 'nothing' },
    returning: ['event_id'],
  }) as Array<{ event_id: string }>;
  const fresh = new Set(inserted.map((r) => r.event_id));
  if (fresh.size < first.size) {
    const stored = [...first.keys()]
      .filter((id) => !fresh.has(id))
      .flatMap((id) => one(s.storedPayload, environment, clientId, id));
    // Throws EventConflictError: the savepoint (or the transaction) rolls the batch back.
    throwConflicts(stored, first, payloads);
  }
  const accepted = acceptedInTimeOrder(batch, fresh);
  if (accepted.length > 0) {
    const entities = new Map<string, EntitiesTable>();
    const currencies = new Map<string, EntityCurrencyTable>();
    const wasFlagged = new Map<string, boolean>();
    for (const id of touchedEntities(accepted)) {
      const [row] = one(s.entity, environment, id);
      const e = row ? entityFromRow(row) : blankEntity(environment, id);
      entities.set(id, e);
      wasFlagged.set(id, isFlagged(e));
      for (const c of one(s.currencies, environment, id)) currencies.set(`${c.entity_id}\u0000${c.currency}`, c);
    }
    const pending = applyAccepted({ environment, entities, currencies, wasFlagged }, accepted, batch);
    writeState(
      db,
      run,
      pending,
      Math.floor(now / BUCKET_MS) - BUCKETS_KEPT,
      (id) => one(s.held, environment, id),
      (id, before) => one(s.prune, environment, id, before),
    );
  }
  return { accepted: accepted.length, duplicates: events.length - accepted.length };
}

/** aggregate-state.ts's writeState, on the direct path. */
function writeState(
  db: Kysely<Database>,
  run: DirectRun,
  p: Pending,
  pruneBefore: number,
  held: (entityId: string) => Link[],
  prune: (entityId: string, before: number) => void,
): void {
  runRows(db, run, {
    table: 'entities',
    columns: ENTITY_COLUMNS,
    rows: [...p.entities.values()].map((e) => ({ ...e, version: e.version + 1 })),
    onConflict: { key: ENTITY_KEY, action: 'replace', columns: ENTITY_COLUMNS.filter((c) => !ENTITY_KEY.includes(c)) },
  });
  runRows(db, run, {
    table: 'entity_currency',
    columns: ['environment', 'entity_id', 'currency', 'trades', 'volume', 'log_mean', 'log_m2'],
    rows: [...p.currencies.values()],
    onConflict: {
      key: ['environment', 'entity_id', 'currency'],
      action: 'replace',
      columns: ['trades', 'volume', 'log_mean', 'log_m2'],
    },
  });
  runRows(db, run, {
    table: 'entity_hourly',
    columns: ['environment', 'entity_id', 'bucket', 'currency', 'trades', 'volume'],
    rows: [...p.buckets.values()],
    onConflict: {
      key: ['environment', 'entity_id', 'bucket', 'currency'],
      action: 'add',
      columns: ['trades', 'volume'],
    },
  });
  for (const id of new Set([...p.buckets.values()].map((b) => b.entity_id))) prune(id, pruneBefore);
  runRows(db, run, {
    table: 'entity_counterparties',
    columns: ['environment', 'entity_id', 'counterparty_id', 'trades'],
    rows: [...p.counterparties.values()],
    onConflict: { key: ['environment', 'entity_id', 'counterparty_id'], action: 'add', columns: ['trades'] },
  });
  // linkage.ts's writeIdentifiers: the links held before the batch's are written, then the new ones.
  const deltas = new IdentifierDeltas(p.environment, p.entities);
  for (const id of flagChanged(p.entities, p.wasFlagged)) deltas.held(held(id));
  deltas.added(
    runRows(db, run, {
      table: 'identifiers',
      columns: ['environment', 'id_type', 'hash', 'entity_id', 'created_at'],
      rows: [...p.identifiers.values()],
      onConflict: { key: ['environment', 'id_type', 'hash', 'entity_id'], action: 'nothing' },
      returning: ['id_type', 'hash', 'entity_id'],
    }) as Link[],
  );
  runRows(db, run, {
    table: 'identifier_stats',
    columns: ['environment', 'id_type', 'hash', 'entities', 'flagged_entities', 'version'],
    rows: deltas.rows(),
    // version: every stored change adds the delta's 1, as writeIdentifiers' `version + 1`
    onConflict: {
      key: ['environment', 'id_type', 'hash'],
      action: 'add',
      columns: ['entities', 'flagged_entities', 'version'],
    },
  });
}
