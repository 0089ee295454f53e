// What the network says about an entity, for the scoring signal `network_flags` (docs/network.md,
// "The signal"): the active peers whose flag sets hold one of its identifiers, and the rule that
// turns them into one value: each peer's contribution is its weight times an age decay, capped at
// half the signal; the value is their sum, capped at 1 — one peer moves it by half at most, and
// only two independent peers together reach the full value.
import type { FlagKind, Label } from './oprf.ts';
import { parseLabel } from './oprf.ts';
import { ENTITY_TYPE, type NetworkDb } from './tables.ts';
import { sql, type RawBuilder } from 'kysely';
import type { Dialect } from '../store/dialect.ts';

export interface PeerFlag {
  peer_id: string;
  peer_name: string;
  weight: number;
  /** per kind, the largest count any of the entity's identifiers carries at this peer */
  kinds: Partial<Record<FlagKind, number>>;
  /** YYYY-MM of the latest flag at this peer */
  latest_month: string;
}

export interface IdentifierRef {
  type: string;
  hash: string;
}

/** One stored match as the reads below return it. */
interface MatchRow {
  peer_id: string;
  name: string;
  weight: number | string;
  label: string;
}

function addMatch(byPeer: Map<string, PeerFlag>, row: MatchRow): void {
  let label: Label | undefined;
  try {
    label = parseLabel(JSON.parse(row.label) as unknown);
  } catch {
    label = undefined;
  }
  if (!label) return;
  const entry = byPeer.get(row.peer_id) ?? {
    peer_id: row.peer_id,
    peer_name: row.name,
    weight: Number(row.weight),
    kinds: {},
    latest_month: label.latest_month,
  };
  for (const [kind, count] of Object.entries(label.kinds) as Array<[FlagKind, number]>)
    entry.kinds[kind] = Math.max(entry.kinds[kind] ?? 0, count);
  if (label.latest_month > entry.latest_month) entry.latest_month = label.latest_month;
  byPeer.set(row.peer_id, entry);
}

const byPeerId = (byPeer: Map<string, PeerFlag>): PeerFlag[] =>
  [...byPeer.values()].sort((a, b) => a.peer_id.localeCompare(b.peer_id));

/**
 * The score's read of the network, folded into the profile query (src/trust/profile.ts): the
 * matches of the active peers for the identifiers `keys` selects (rows of id_type, hash) and for
 * the entity's own id under the `entity` type (matched only with the common entity hashing on:
 * nothing is resolved under it otherwise), as one JSON array text — or null / '[]' when there are
 * none. Only the live environment takes part.
 */
export function networkMatchesSql(
  dialect: Dialect,
  env: unknown,
  keys: RawBuilder<unknown>,
  entityId: unknown,
): RawBuilder<unknown> {
  const from = sql`from (${keys} union select cast(${sql.lit(ENTITY_TYPE)} as text), cast(${entityId} as text)) k
      join network_matches nm on nm.id_type = k.id_type and nm.hash = k.hash
      join network_peers np on np.id = nm.peer_id
      where np.status = 'active' and ${env} = 'live'`;
  return dialect === 'postgres'
    ? sql`(select cast(json_agg(json_build_object('peer_id', nm.peer_id, 'name', np.name, 'weight', np.weight, 'label', nm.label)) as text) ${from})`
    : sql`(select json_group_array(json_object('peer_id', nm.peer_id, 'name', np.name, 'weight', np.weight, 'label', nm.label)) ${from})`;
}

/**
 * What scores read from the network changes with this number (bumped at every sync and peer
 * change): a cached score checks it with the store's versions (src/trust/profile.ts).
 */
export const networkVersionSql = sql`(select max(ni.state_version) from network_identity ni)`;

/** The JSON text networkMatchesSql returned, as the peers' flags; malformed entries are skipped. */
export function parseNetworkMatches(text: string | null | undefined): PeerFlag[] {
  if (!text || text === '[]') return [];
  let rows: unknown;
  try {
    rows = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(rows)) return [];
  const byPeer = new Map<string, PeerFlag>();
  for (const row of rows as Array<Partial<MatchRow>>) {
    if (typeof row?.peer_id === 'string' && typeof row.name === 'string' && typeof row.label === 'string')
      addMatch(byPeer, row as MatchRow);
  }
  return byPeerId(byPeer);
}

/**
 * The active peers whose published flags match any of `identifiers` (as of the last sync). Only
 * the live environment takes part in the network: test data never matches. A suspended or
 * removed peer is left out at once.
 */
export async function networkFlagsFor(
  db: NetworkDb,
  environment: string,
  identifiers: IdentifierRef[],
): Promise<PeerFlag[]> {
  if (environment !== 'live' || identifiers.length === 0) return [];
  const byPeer = new Map<string, PeerFlag>();
  for (let i = 0; i < identifiers.length; i += 200) {
    const chunk = identifiers.slice(i, i + 200);
    const rows = await db
      .selectFrom('network_matches as m')
      .innerJoin('network_peers as p', 'p.id', 'm.peer_id')
      .select(['m.peer_id', 'm.label', 'p.name', 'p.weight'])
      .where('p.status', '=', 'active')
      .where((eb) => eb.or(chunk.map((id) => eb.and([eb('m.id_type', '=', id.type), eb('m.hash', '=', id.hash)]))))
      .execute();
    rows.forEach((row) => addMatch(byPeer, row));
  }
  return byPeerId(byPeer);
}

/** Half-life of a peer's flag, in days: a flag from three months ago counts half. */
export const HALF_LIFE_DAYS = 90;
/**
 * The most one peer can contribute, whatever its weight or however many of the entity's identifiers
 * it flags: a peer's marginal effect on any score is at most this share of the policy's weight.
 */
export const PEER_CAP = 0.5;
/** The signal's full value, reached only by independent peers agreeing (1 / PEER_CAP = two of them). */
export const NETWORK_CAP = 1;

const KIND_WORDS: Record<FlagKind, string> = {
  fraud_report: 'fraud report',
  chargeback: 'chargeback',
  blocklisted: 'blocklisting',
  dispute_lost: 'lost dispute',
};

/** Days from the end of the flag's month to `now` (a month's flags are at most that old). */
function ageDays(month: string, now: number): number {
  const [year, mon] = month.split('-').map(Number) as [number, number];
  return Math.max(0, (now - Date.UTC(year, mon, 1)) / 86_400_000);
}

export interface NetworkSignal {
  /** the feature value: min(NETWORK_CAP, Σ c_p), with c_p = PEER_CAP · min(1, weight_p · 2^(−age_p / HALF_LIFE_DAYS)) */
  value: number;
  /** the contributing peers (weight > 0), for the decision record: their shares of `value` (they sum to it) */
  peers: Array<{ id: string; name: string; contribution: number }>;
  description: string;
}

export function networkFlagsSignal(flags: PeerFlag[], now = Date.now()): NetworkSignal {
  const peers = flags
    .map((f) => ({
      id: f.peer_id,
      name: f.peer_name,
      contribution:
        PEER_CAP * Math.min(1, Math.max(0, f.weight) * 2 ** (-ageDays(f.latest_month, now) / HALF_LIFE_DAYS)),
    }))
    .filter((p) => p.contribution > 0);
  if (peers.length === 0)
    return { value: 0, peers: [], description: 'no other marketplace flagged an identifier it uses' };
  const total = peers.reduce((sum, p) => sum + p.contribution, 0);
  const value = Math.min(NETWORK_CAP, total);
  // Beyond the cap each peer's share shrinks alike, so the decision's contributions add up to the value.
  const share = value / total;
  const kinds = [
    ...new Set(
      flags.filter((f) => peers.some((p) => p.id === f.peer_id)).flatMap((f) => Object.keys(f.kinds) as FlagKind[]),
    ),
  ].sort();
  const newest = flags.reduce((m, f) => (f.latest_month > m ? f.latest_month : m), '0000-01');
  const within = ageDays(newest, now) <= 90 ? ' in the last 90 days' : ` (latest ${newest})`;
  const who = peers.length === 1 ? '1 other marketplace' : `${peers.length} other marketplaces`;
  return {
    value: Math.round(value * 1000) / 1000,
    peers: peers.map((p) => ({ ...p, contribution: Math.round(p.contribution * share * 1000) / 1000 })),
    description: `an identifier it uses was flagged by ${who}${within} (${kinds.map((k) => KIND_WORDS[k]).join(', ')})`,
  };
}

/**
 * The identifiers the network knows a live entity by (docs/network.md, "The signal"): `linked`, those
 * events linked to it and its own id under the `entity` type (matched only with the common entity
 * hashing on) — what every score of it counts; and `named`, those only score requests named for it
 * in their context (network_pending) — which a score counts only when its own request names them,
 * so that no client's request changes what another client's scores of the entity see.
 */
export async function entityNetworkIdentifiers(
  db: NetworkDb,
  entityId: string,
): Promise<{ linked: IdentifierRef[]; named: IdentifierRef[] }> {
  const stored = await db
    .selectFrom('identifiers')
    .select(['id_type as type', 'hash'])
    .where('environment', '=', 'live')
    .where('entity_id', '=', entityId)
    .execute();
  const linked = [...stored, { type: ENTITY_TYPE, hash: entityId }];
  const known = new Set(linked.map((l) => `${l.type}\u0000${l.hash}`));
  const queued = await db
    .selectFrom('network_pending')
    .select(['id_type as type', 'hash'])
    .where('entity_id', '=', entityId)
    .distinct()
    .execute();
  return { linked, named: queued.filter((q) => !known.has(`${q.type}\u0000${q.hash}`)) };
}
