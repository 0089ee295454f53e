// Profiles in memory, per serving process. A score for an entity whose state has not changed since
// its profile was read does not run the profile query again: the query's row (and the ring read
// with it) is kept, keyed by what the row depends on besides the store — the entity, the request's
// currency, the ten-minute velocity bucket and the policy's ring fanout.
//
// SQLite: an entry answers while the store's change generation (store/changes.ts) is the one it
// was read under, with no query. That generation moves at the next turn after any commit, by any
// process, that changes an entity, an identifier's holders, the network's state or the revocation
// feed, and at once after this process's own ingestion: a fresh chargeback is never hidden, on any
// instance of the host. Commits that only store decisions leave it, so under scoring load the
// entries keep answering.
//
// PostgreSQL has no such local signal (another instance commits on another host): an entry answers
// once one primary-key query (with the counterparty's trade count) finds the entity's state — its
// version, its identifiers' versions, the network's version: what a cached score is checked
// against (trust/cache.ts) — unchanged, so the check is as fresh as the full read. Only entries
// without a ring are kept there: a ring reaches two hops, further than that state.
//
// A request that names identifiers of its own reads the store (the row sums over them too). The
// counterparty's trade count is the one figure that depends on the request: on SQLite a different
// counterparty costs one primary-key read.
import { LRUCache } from 'lru-cache';
import type { Store } from '../store/db.ts';
import { PreparedQuery } from '../store/prepared.ts';
import type { Environment } from '../lib/principal.ts';
import type { Ring } from '../model/ring.ts';
import { BUCKET_MS } from './apply-event.ts';
import {
  loadProfile,
  networkParts,
  profileFromRow,
  readProfileRow,
  readRing,
  stateOf,
  type LoadedProfile,
  type ProfileQuery,
  type ProfileRow,
} from './profile.ts';
import { counterpartyTradesSql, stateAndCounterpartySql } from '../entities/profile-repository.ts';

/**
 * Entries kept per process: ≈ 0.9 KB each with its key and slot (bench/profile-cache-memory.ts),
 * so the bound costs ≈ 17 MiB of a worker's memory; 20,000 entities are the active traders of a
 * large desk's day.
 */
export const PROFILE_CACHE_ENTRIES = 20_000;

/** The row's numeric columns, in the order an entry keeps them. */
const COLUMNS = [
  'version',
  'first_seen_at',
  'last_event_at',
  'trades_completed',
  'trades_cancelled',
  'disputes_opened',
  'disputes_won',
  'disputes_lost',
  'chargebacks',
  'fraud_reports',
  'blocklisted',
  'decay_at',
  'd_trades_completed',
  'd_trades_cancelled',
  'd_disputes_lost',
  'd_chargebacks',
  'd_fraud_reports',
  'd_disputes_lost_fraudulent',
  'c_trades',
  'c_volume',
  'c_log_mean',
  'c_log_m2',
  'trades_hour',
  'trades_day',
  'volume_day',
  'counterparty_trades',
  'linked_flagged',
  'linked_holders',
  'last_trade_at',
  'linked_version',
  'own_identifiers',
  'disputes_lost_third_party_payment',
  'disputes_lost_fake_proof',
  'disputes_lost_underpayment',
  'disputes_lost_no_payment',
  'net_version',
] as const satisfies ReadonlyArray<Exclude<keyof ProfileRow, 'network'>>;

const WIDTH = COLUMNS.length;

/**
 * The entries' rows, side by side in one typed array (null as NaN), a slot per entry. A row object
 * of forty properties, each double boxed, costs ≈ 2.3 KB of heap per entry and some forty objects
 * for every full collection to mark; a slot is 288 bytes of one allocation the collector never
 * looks into. One slot more than the entries: a row is written before the entry that evicts the
 * least recently used one is set.
 */
class RowSlots {
  private readonly data: Float64Array;
  /** released slots; those never used are counted instead of listed, so a new RowSlots costs no loop */
  private readonly free: number[] = [];
  private used = 0;

  constructor(private readonly slots: number) {
    this.data = new Float64Array(slots * WIDTH);
  }

  write(row: ProfileRow): number {
    const slot = this.free.pop() ?? (this.used < this.slots ? this.used++ : undefined);
    if (slot === undefined) throw new Error('profile cache: no free slot'); // the bound above makes this unreachable
    const base = slot * WIDTH;
    for (let i = 0; i < WIDTH; i++) {
      const value = row[COLUMNS[i]!];
      this.data[base + i] = value === null || value === undefined ? NaN : Number(value);
    }
    return slot;
  }

  read(slot: number, network: string | null, counterpartyTrades?: number | null): ProfileRow {
    const row: Record<string, number | string | null> = { network };
    const base = slot * WIDTH;
    for (let i = 0; i < WIDTH; i++) {
      const value = this.data[base + i]!;
      row[COLUMNS[i]!] = Number.isNaN(value) ? null : value;
    }
    if (counterpartyTrades !== undefined) row.counterparty_trades = counterpartyTrades;
    return row as unknown as ProfileRow;
  }

  release(slot: number): void {
    this.free.push(slot);
  }
}

interface Entry {
  slot: number;
  network: string | null;
  ring: Ring | null;
  /** the store's change generation the row was read under (SQLite) */
  generation: number;
  /** the entity's state the row was read at (LoadedProfile.state; PostgreSQL checks it) */
  state: string;
  /** the counterparty whose trade count the row holds */
  counterpartyId: string | undefined;
}

const counterpartyQueries = new WeakMap<Store, PreparedQuery<unknown[], { trades: number }>>();

async function counterpartyTrades(
  store: Store,
  environment: Environment,
  entityId: string,
  counterpartyId: string,
): Promise<number | null> {
  let query = counterpartyQueries.get(store);
  if (!query) {
    query = new PreparedQuery(store.db as never, 3, (_db, env, id, counterparty) =>
      counterpartyTradesSql(env, id, counterparty).compile(store.db),
    );
    counterpartyQueries.set(store, query);
  }
  const [row] = await query.execute(environment, entityId, counterpartyId);
  return row ? row.trades : null;
}

interface CheckRow {
  version: number | string | null;
  linked_version: number | string | null;
  net_version: number | string | null;
  counterparty_trades: number | string | null;
}
const checkQueries = new WeakMap<Store, PreparedQuery<unknown[], CheckRow>>();

/**
 * The entity's state now (as profile.ts currentState reads it) and its trade count with the counterparty, in one query.
 */
async function readCheck(
  store: Store,
  environment: Environment,
  entityId: string,
  counterpartyId: string,
): Promise<CheckRow> {
  let query = checkQueries.get(store);
  if (!query) {
    query = new PreparedQuery(store.db as never, 3, (_db, env, id, counterparty) =>
      stateAndCounterpartySql(networkParts(store), env, id, counterparty).compile(store.db),
    );
    checkQueries.set(store, query);
  }
  const [row] = await query.execute(environment, entityId, counterpartyId);
  return row!;
}

/** An empty cache: its entries and their rows, one slot more than the entries (RowSlots). */
function openEntries(maxEntries: number): { entries: LRUCache<string, Entry>; rows: RowSlots } {
  const rows = new RowSlots(maxEntries + 1);
  return {
    entries: new LRUCache<string, Entry>({ max: maxEntries, dispose: (entry) => rows.release(entry.slot) }),
    rows,
  };
}

export class ProfileCache {
  private entries: LRUCache<string, Entry>;
  private rows: RowSlots;

  constructor(
    private readonly store: Store,
    private readonly maxEntries = PROFILE_CACHE_ENTRIES,
  ) {
    ({ entries: this.entries, rows: this.rows } = openEntries(maxEntries));
  }

  /**
   * Drops every entry (see ScoringService.forget): a new, empty cache rather than lru-cache's clear,
   * which releases every entry's slot in one turn (6–12 ms for 20,000). A load in flight finishes on
   * the cache it started with, which is then garbage, so it cannot put back a row read before.
   */
  clear(): void {
    ({ entries: this.entries, rows: this.rows } = openEntries(this.maxEntries));
  }

  /** The profile `loadProfile` would read now, from memory when nothing it depends on has changed. */
  async load(q: ProfileQuery): Promise<LoadedProfile> {
    const { entries, rows } = this;
    if (q.linked !== undefined && q.linked.length > 0) return loadProfile(this.store, q);
    const changes = this.store.changes;
    changes.poll();
    // Taken before the read: a change committed while it runs leaves the entry older than its row, never newer.
    const generation = changes.generation;
    const key = `${q.environment}\n${q.entityId}\n${q.currency}\n${Math.floor(q.now / BUCKET_MS)}\n${q.ringFanout ?? ''}`;
    const entry = entries.get(key);
    if (entry && changes.supported && entry.generation === generation) {
      if (q.counterpartyId === undefined || q.counterpartyId === entry.counterpartyId)
        return profileFromRow(rows.read(entry.slot, entry.network), q, entry.ring);
      const trades = await counterpartyTrades(this.store, q.environment, q.entityId, q.counterpartyId);
      return profileFromRow(rows.read(entry.slot, entry.network, trades), q, entry.ring);
    }
    if (entry && !changes.supported && entry.ring === null) {
      const check = await readCheck(this.store, q.environment, q.entityId, q.counterpartyId ?? '');
      // The check ran after the entry's read: an unchanged state means nothing the row holds has changed since.
      if (stateOf(check) === entry.state)
        return profileFromRow(
          rows.read(
            entry.slot,
            entry.network,
            check.counterparty_trades === null ? null : Number(check.counterparty_trades),
          ),
          q,
          null,
        );
    }
    const row = await readProfileRow(this.store, q);
    const ring = await readRing(this.store, q, row);
    if (changes.supported || ring === null) {
      entries.set(key, {
        slot: rows.write(row),
        network: row.network,
        ring,
        generation,
        state: stateOf(row),
        counterpartyId: q.counterpartyId,
      });
    } else entries.delete(key);
    return profileFromRow(row, q, ring);
  }
}
