// Row types of the network's tables (migration 015_network), added to the store's Kysely type
// here so the network module owns them.
import type { Generated, Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';

interface NetworkIdentityTable {
  /** always 'self': one identity per deployment */
  id: string;
  /** the Ed25519 private JWK, sealed under the KEK */
  signing_private: string;
  /** base64url raw Ed25519 public key */
  signing_public: string;
  /** the OPRF secret scalar, sealed under the KEK */
  oprf_secret: string;
  /** base64url ristretto255 public key */
  oprf_public: string;
  /** epoch ms until which one process holds the scheduled sync */
  sync_lease_until: number;
  /** bumped whenever what scores read from the network may have changed (018_network_scoring) */
  state_version: number;
  /** ingestion time (epoch ms) through which the history is published (020_network_incremental); 0: never */
  published_through: number;
  /** the descriptor's name the serving deployment last started with ('' before; 027_network_fairness) */
  name: Generated<string>;
  created_at: number;
}

export interface NetworkPeersTable {
  id: string;
  name: string;
  url: string;
  signing_key: string;
  /** the peer's OPRF public key, read from its signed descriptor at each sync */
  oprf_public: string | null;
  status: string;
  weight: number;
  /** kinds shown to this peer, space-separated */
  publish: string;
  /** bumped when `publish` changes, so the peer's next pull starts over */
  publish_epoch: number;
  budget_per_day: number;
  /** how far this deployment has pulled the peer's flags ('' = from the start) */
  flags_since: string;
  /** the peer's set epoch at the last pull; a change means pull everything again */
  flags_epoch: string;
  /** the next page of a pull a sync left unfinished ('' = none; 020_network_incremental) */
  flags_cursor: string;
  last_sync_at: number | null;
  last_error: string | null;
  created_at: number;
}

interface NetworkNoncesTable {
  peer_id: string;
  nonce: string;
  expires_at: number;
}

interface NetworkBudgetTable {
  peer_id: string;
  /** UTC day, YYYY-MM-DD */
  day: string;
  used: number;
}

interface NetworkPublishedTable {
  tag: string;
  /** digest naming the identifier locally; null once withdrawn */
  source: string | null;
  /** the identifier's type (never its hash; 020_network_incremental), null on rows published before */
  id_type: string | null;
  /** the label (JSON) while published; null for a tombstone */
  label: string | null;
  label_key: string | null;
  seq: number;
  updated_at: number;
}

interface NetworkPeerFlagsTable {
  peer_id: string;
  tag: string;
  sealed: string;
}

interface NetworkResolvedTable {
  peer_id: string;
  id_type: string;
  hash: string;
  /** the peer OPRF key these values were computed under */
  oprf_public: string;
  tag: string;
  label_key: string;
  resolved_at: number;
}

/** Identifiers seen only in score requests' context, for the next sync to resolve (018_network_scoring). */
interface NetworkPendingTable {
  id_type: string;
  hash: string;
  /** the entity scored with it ('' for rows queued before 020_network_incremental): its erasure removes them */
  entity_id: string;
  seen_at: number;
  /** the client whose score request named it ('' for rows queued before 027_network_fairness) */
  client_id: Generated<string>;
  /** 1 while an active peer has not resolved it: what a client's quota counts (recomputed at each sync) */
  queued: Generated<number>;
}

interface NetworkMatchesTable {
  peer_id: string;
  id_type: string;
  hash: string;
  /** the opened label (JSON) */
  label: string;
  matched_at: number;
}

// A type alias, not an interface: Kysely's withTables wants an index-signature-compatible type.
/** The identifier type under which entity ids are published and matched when the members hash them in common. */
export const ENTITY_TYPE = 'entity';

export type NetworkTables = {
  network_identity: NetworkIdentityTable;
  network_peers: NetworkPeersTable;
  network_nonces: NetworkNoncesTable;
  network_budget: NetworkBudgetTable;
  network_published: NetworkPublishedTable;
  network_peer_flags: NetworkPeerFlagsTable;
  network_resolved: NetworkResolvedTable;
  network_matches: NetworkMatchesTable;
  network_pending: NetworkPendingTable;
};

export type NetworkDb = Kysely<Database & NetworkTables>;

export const networkDb = (db: Kysely<Database>): NetworkDb => db.withTables<NetworkTables>();

/**
 * The same executor seen with the store's tables only, for the entity tables' and settings' owners
 * (src/entities/, changes/repository.ts), which do not know the network's tables: the network's
 * tables are an addition to `Database`, so nothing is lost.
 */
export const storeTables = (db: NetworkDb): Kysely<Database> => db as unknown as Kysely<Database>;
