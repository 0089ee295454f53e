// What the network says about an entity, for the scoring signal `network_flags` (docs/network.md,
// "The signal"): the active peers whose flag sets hold one of its identifiers, and the rule that
// turns them into one value: each peer's contribution is its weight times an age decay, capped at
// half the signal; the value is their sum, capped at 1 — one peer moves it by half at most, and
// only two independent peers together reach the full value.
import type { Label } from './oprf.ts';
import { parseLabel } from './oprf.ts';
import type { FlagKind, PeerFlag } from '../model/network-signal.ts';
import { ENTITY_TYPE, type NetworkDb } from './tables.ts';
import { sql, type RawBuilder } from 'kysely';
import type { Store } from '../store/db.ts';
import { jsonRowsSql } from '../store/json-rows.ts';

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
  store: Store,
  env: unknown,
  keys: RawBuilder<unknown>,
  entityId: unknown,
): RawBuilder<string | null> {
  const from = sql`from (${keys} union select cast(${sql.lit(ENTITY_TYPE)} as text), cast(${entityId} as text)) k
      join network_matches nm on nm.id_type = k.id_type and nm.hash = k.hash
      join network_peers np on np.id = nm.peer_id
      where np.status = 'active' and ${env} = 'live'`;
  const fields = { peer_id: sql`nm.peer_id`, name: sql`np.name`, weight: sql`np.weight`, label: sql`nm.label` };
  return jsonRowsSql(store, fields, from);
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
