// Loads everything the model needs about one entity in a single round trip: the aggregates, the
// currency statistics, velocity buckets, the counterparty count and flagged neighbours. The
// statements are their tables' owners' (entities/profile-repository.ts, with the network's parts
// from network/); this file composes them, compiles each once per store and shape, and maps the row.
import type { Store } from '../store/db.ts';
import { PreparedQuery } from '../store/prepared.ts';
import type { DecayedCounts, EntityProfile, LinkedIdentifier } from '../model/types.ts';
import { BUCKET_MS } from './apply-event.ts';
import type { Environment } from '../lib/principal.ts';
import { parseNetworkMatches } from '../network/signal.ts';
import { networkMatchesSql } from '../network/match-repository.ts';
import { networkVersionSql } from '../network/publication-repository.ts';
import { readNeighbourhood, SCORE_CAPS } from '../rings/read.ts';
import { walkRing } from '../rings/graph.ts';
import type { Ring } from '../model/ring.ts';
import {
  profileSql,
  stateSql,
  type NetworkParts,
  type ProfileRow,
  type StateRow,
} from '../entities/profile-repository.ts';

export type { ProfileRow };

export interface LoadedProfile {
  profile: EntityProfile;
  /** changes with every event that can change this entity's score; 0 for an unknown entity */
  version: number;
  /**
   * The entity's version, the sum of the versions of the identifiers the score looked at (its
   * own and the request's) and the network's version (bumped at every sync and peer change). Every
   * term only grows, and the entity's set of identifiers changes only with its own version, so the
   * triple changes whenever anything the score read has changed.
   */
  state: string;
}

export interface ProfileQuery {
  /** only this partition's rows are read (docs/api.md, "Integration" test mode) */
  environment: Environment;
  entityId: string;
  currency: string;
  counterpartyId?: string | undefined;
  linked?: LinkedIdentifier[] | undefined;
  now: number;
  /**
   * read the entity's ring (two hops, capped) with this hub fanout (the policy's maxIdentifierFanout); absent: no ring
   * read
   */
  ringFanout?: number | undefined;
}

const n = (v: number | string | null | undefined) => (v === null || v === undefined ? 0 : Number(v));

/** LoadedProfile.state from the versions a query read. */
export const stateOf = (
  row:
    | { version: number | string | null; linked_version: number | string | null; net_version: number | string | null }
    | undefined,
): string => `${n(row?.version)}.${n(row?.linked_version)}.${n(row?.net_version)}`;

/**
 * The network's parts of the entity statements (its owner's fragments): its version, which every
 * state check reads, and its matches, which the profile statement reads.
 */
export const networkParts = (store: Store): NetworkParts => ({
  version: networkVersionSql,
  matches: (env, keys, entityId) => networkMatchesSql(store, env, keys, entityId),
});

const profileShapes = new WeakMap<Store, Map<number, PreparedQuery<unknown[], ProfileRow>>>();

/** The profile query for a request naming `linked` identifiers, compiled once per store and count. */
function profileQuery(store: Store, linked: number): PreparedQuery<unknown[], ProfileRow> {
  let shapes = profileShapes.get(store);
  if (!shapes) profileShapes.set(store, (shapes = new Map()));
  let query = shapes.get(linked);
  if (!query) {
    query = new PreparedQuery<unknown[], ProfileRow>(
      store.db as never,
      6 + 2 * linked,
      (_db, env, id, currency, counterparty, hourFrom, dayFrom, ...pairs) =>
        profileSql(networkParts(store), { env, id, currency, counterparty, hourFrom, dayFrom, pairs }).compile(
          store.db,
        ),
    );
    shapes.set(linked, query);
  }
  return query;
}

export async function loadProfile(store: Store, q: ProfileQuery): Promise<LoadedProfile> {
  const row = await readProfileRow(store, q);
  return profileFromRow(row, q, await readRing(store, q, row));
}

/** The one profile query's row for `q`. */
export async function readProfileRow(store: Store, q: ProfileQuery): Promise<ProfileRow> {
  const bucket = Math.floor(q.now / BUCKET_MS);
  const linked = q.linked ?? [];
  const rows = await profileQuery(store, linked.length).execute(
    q.environment,
    q.entityId,
    q.currency,
    q.counterpartyId ?? '',
    bucket - 5,
    bucket - 143,
    ...linked.flatMap((l) => [l.type, l.hash]),
  );
  return rows[0]!;
}

/** Only an entity sharing an identifier has a ring: the common case costs no further read. */
export async function readRing(store: Store, q: ProfileQuery, row: ProfileRow): Promise<Ring | null> {
  if (q.ringFanout === undefined || sharedWith(row) === 0) return null;
  const caps = { ...SCORE_CAPS, fanout: q.ringFanout };
  const hood = await readNeighbourhood(
    store.db,
    q.environment,
    q.entityId,
    (q.linked ?? []).map((l) => ({ idType: l.type, hash: l.hash })),
    caps,
  );
  return walkRing(hood, caps.depth, caps.fanout);
}

// Every holder count includes the entity itself once per identifier it holds.
const sharedWith = (row: ProfileRow) => Math.max(0, n(row.linked_holders) - n(row.own_identifiers));

/** The profile a row (and the ring read with it) describes; `q` supplies what the request named. */
export function profileFromRow(row: ProfileRow, q: ProfileQuery, ring: Ring | null): LoadedProfile {
  const known = row.version !== null && n(row.version) > 0;
  // identifier_stats counts the entity itself among the flagged holders of each identifier it holds.
  const selfFlagged = n(row.fraud_reports) > 0 || n(row.blocklisted) === 1;
  const linkedFlagged = Math.max(0, n(row.linked_flagged) - (selfFlagged ? n(row.own_identifiers) : 0));
  const decayed: DecayedCounts = {
    at: n(row.decay_at) || q.now,
    tradesCompleted: n(row.d_trades_completed),
    tradesCancelled: n(row.d_trades_cancelled),
    disputesLost: n(row.d_disputes_lost),
    chargebacks: n(row.d_chargebacks),
    fraudReports: n(row.d_fraud_reports),
    fraudulentLosses: n(row.d_disputes_lost_fraudulent),
  };
  return {
    version: n(row.version),
    state: stateOf(row),
    profile: {
      entityId: q.entityId,
      known,
      firstSeenAt: known ? n(row.first_seen_at) : null,
      lastEventAt: known ? n(row.last_event_at) : null,
      tradesCompleted: n(row.trades_completed),
      tradesCancelled: n(row.trades_cancelled),
      disputesOpened: n(row.disputes_opened),
      disputesWon: n(row.disputes_won),
      disputesLost: n(row.disputes_lost),
      disputesLostFor: {
        third_party_payment: n(row.disputes_lost_third_party_payment),
        fake_proof: n(row.disputes_lost_fake_proof),
        underpayment: n(row.disputes_lost_underpayment),
        no_payment: n(row.disputes_lost_no_payment),
      },
      chargebacks: n(row.chargebacks),
      fraudReports: n(row.fraud_reports),
      blocklisted: n(row.blocklisted) === 1,
      decayed,
      velocity: {
        tradesLastHour: n(row.trades_hour),
        tradesLastDay: n(row.trades_day),
        volumeLastDay: n(row.volume_day),
      },
      amountStats: { n: n(row.c_trades), logMean: n(row.c_log_mean), logM2: n(row.c_log_m2), volume: n(row.c_volume) },
      counterpartyTrades: q.counterpartyId === undefined ? null : n(row.counterparty_trades),
      linkedFlaggedEntities: linkedFlagged,
      lastTradeAt: known && n(row.last_trade_at) > 0 ? n(row.last_trade_at) : null,
      sharedIdentifierEntities: sharedWith(row),
      networkFlags: parseNetworkMatches(row.network),
      ring,
    },
  };
}

const stateShapes = new WeakMap<Store, Map<number, PreparedQuery<unknown[], StateRow>>>();

/**
 * The current state (see LoadedProfile.state) of an entity and the request's identifiers, for
 * validating a cached score: one query, by primary keys.
 */
export async function currentState(
  store: Store,
  environment: Environment,
  entityId: string,
  linked: readonly LinkedIdentifier[] = [],
): Promise<string> {
  let shapes = stateShapes.get(store);
  if (!shapes) stateShapes.set(store, (shapes = new Map()));
  let query = shapes.get(linked.length);
  if (!query) {
    query = new PreparedQuery(store.db as never, 2 + 2 * linked.length, (_db, env, id, ...pairs) =>
      stateSql(networkParts(store), env, id, pairs).compile(store.db),
    );
    shapes.set(linked.length, query);
  }
  const [row] = await query.execute(environment, entityId, ...linked.flatMap((l) => [l.type, l.hash]));
  return stateOf(row);
}
