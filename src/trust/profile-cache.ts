// Profiles in memory, per serving process. A score for an entity whose state has not changed since
// its profile was read reads nothing of its aggregates again: the profile query's row (and the
// ring read with it) is kept, keyed by what the row depends on besides the store — the entity, the
// request's currency, the ten-minute velocity bucket and the policy's ring fanout — and answers
// only while the store's change generation (store/changes.ts) is the one it was read under. That
// generation moves at the next turn after any commit, by any process, that changes an entity, an
// identifier's holders, the network's state or the revocation feed, and at once after this
// process's own ingestion: a fresh chargeback is never hidden, on any instance of the host. Commits
// that only store decisions leave it, so under scoring load the entries keep answering.
//
// Where the generation is not available (PostgreSQL), or the request names identifiers of its own
// (the row then sums over them too), every score reads the store as before. The counterparty's
// trade count is the one figure that depends on the request: a different counterparty costs one
// primary-key read.
import { sql } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Store } from '../store/db.ts';
import { PreparedQuery } from '../store/prepared.ts';
import type { Environment } from '../auth/principal.ts';
import type { Ring } from '../rings/graph.ts';
import { BUCKET_MS } from './ingest.ts';
import { loadProfile, profileFromRow, readProfileRow, readRing, type LoadedProfile, type ProfileQuery, type ProfileRow } from './profile.ts';

/**
 * Entries kept per process. An entry is one flat row of about forty numbers (≈ 1 KB with its key),
 * so the bound costs at most ≈ 20 MB of a worker's memory; 20,000 entities are the active traders
 * of a large desk's day.
 */
export const PROFILE_CACHE_ENTRIES = 20_000;

interface Entry {
  row: ProfileRow;
  ring: Ring | null;
  /** the store's change generation the row was read under */
  generation: number;
  /** the counterparty whose trade count the row holds */
  counterpartyId: string | undefined;
}

const counterpartyQueries = new WeakMap<Store, PreparedQuery<unknown[], { trades: number }>>();

async function counterpartyTrades(store: Store, environment: Environment, entityId: string, counterpartyId: string): Promise<number | null> {
  let query = counterpartyQueries.get(store);
  if (!query) {
    query = new PreparedQuery(store.db as never, 3, (_db, env, id, counterparty) => sql<{ trades: number }>`
      select cp.trades from entity_counterparties cp where cp.environment = ${env} and cp.entity_id = ${id} and cp.counterparty_id = ${counterparty}`.compile(store.db));
    counterpartyQueries.set(store, query);
  }
  const [row] = await query.execute(environment, entityId, counterpartyId);
  return row ? row.trades : null;
}

export class ProfileCache {
  private readonly entries: LRUCache<string, Entry> | undefined;

  constructor(private readonly store: Store, maxEntries = PROFILE_CACHE_ENTRIES) {
    this.entries = store.changes.supported && maxEntries > 0 ? new LRUCache<string, Entry>({ max: maxEntries }) : undefined;
  }

  /** The profile `loadProfile` would read now, from memory when nothing it depends on has changed. */
  async load(q: ProfileQuery): Promise<LoadedProfile> {
    const entries = this.entries;
    if (!entries || (q.linked !== undefined && q.linked.length > 0)) return loadProfile(this.store, q);
    const changes = this.store.changes;
    changes.poll();
    // Taken before the read: a change committed while it runs leaves the entry older than its row, never newer.
    const generation = changes.generation;
    const key = `${q.environment}\n${q.entityId}\n${q.currency}\n${Math.floor(q.now / BUCKET_MS)}\n${q.ringFanout ?? ''}`;
    const entry = entries.get(key);
    if (entry && entry.generation === generation) {
      if (q.counterpartyId === undefined || q.counterpartyId === entry.counterpartyId) return profileFromRow(entry.row, q, entry.ring);
      const trades = await counterpartyTrades(this.store, q.environment, q.entityId, q.counterpartyId);
      return profileFromRow({ ...entry.row, counterparty_trades: trades }, q, entry.ring);
    }
    const row = await readProfileRow(this.store, q);
    const ring = await readRing(this.store, q, row);
    entries.set(key, { row, ring, generation, counterpartyId: q.counterpartyId });
    return profileFromRow(row, q, ring);
  }
}
