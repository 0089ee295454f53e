// The store's answers to the ring plan (src/rings/graph.ts): indexed reads only — an entity's
// identifiers through identifiers_entity, an identifier's holders and stats by primary key — each
// bounded by the plan's per-hop limit, so a read costs the same in a 5,000-entity component as in
// a ring of five. The queries are the entity tables' owner's (src/entities/neighbour-repository.ts).
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';
import { ringHoldersAmong, ringIdentifiersOf, ringStatsAmong } from '../entities/neighbour-repository.ts';
import {
  collect,
  keyOf,
  plan,
  type HeldIdentifier,
  type IdentifierKey,
  type Neighbourhood,
  type RingCaps,
  type RingEntity,
  type RingRequest,
  type RingResponse,
} from './graph.ts';

const n = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

/** Caps of the score's read: two hops, a few dozen identifiers and a hundred-odd entities per hop. */
export const SCORE_CAPS = { depth: 2, identifiersPerHop: 48, entitiesPerHop: 128 } as const;

/**
 * `id_type IN (…) AND hash IN (…)`: both stores walk the primary key (environment, id_type, hash, …)
 * once per combination, where an OR of (id_type, hash) pairs could make SQLite scan the table. The
 * rare combination that is not one of the pairs asked for is dropped by `wanted`.
 */
function pairFilter(ids: readonly IdentifierKey[]) {
  const keys = new Set(ids.map(keyOf));
  return {
    types: [...new Set(ids.map((k) => k.idType))],
    hashes: [...new Set(ids.map((k) => k.hash))],
    wanted: (row: { id_type: string; hash: string }) => keys.has(keyOf({ idType: row.id_type, hash: row.hash })),
  };
}

async function answer(db: Kysely<Database>, env: Environment, r: RingRequest): Promise<RingResponse> {
  if (r.kind === 'identifiers') {
    const rows = await ringIdentifiersOf(db, env, r.entityIds, r.limit);
    return rows.map((x): HeldIdentifier => ({
      idType: x.id_type,
      hash: x.hash,
      entityId: x.entity_id,
      holders: n(x.entities),
    }));
  }
  const f = pairFilter(r.identifiers);
  if (r.kind === 'stats') {
    const rows = await ringStatsAmong(db, env, f.types, f.hashes);
    return rows
      .filter(f.wanted)
      .map((x): HeldIdentifier => ({ idType: x.id_type, hash: x.hash, entityId: '', holders: n(x.entities) }));
  }
  const rows = await ringHoldersAmong(db, env, f.types, f.hashes, r.limit);
  return rows.filter(f.wanted).map((x) => {
    const entity: RingEntity = {
      entityId: x.entity_id,
      fraudReports: n(x.fraud_reports),
      blocklisted: n(x.blocklisted) === 1,
      chargebacks: n(x.chargebacks),
      disputesLost: n(x.disputes_lost),
      flaggedAt: n(x.flagged_at),
    };
    return { idType: x.id_type, hash: x.hash, entityId: x.entity_id, holders: n(x.entities), entity };
  });
}

/** The capped neighbourhood of `root` in `env`, read hop by hop. */
export function readNeighbourhood(
  db: Kysely<Database>,
  env: Environment,
  root: string,
  seeds: readonly IdentifierKey[],
  caps: RingCaps,
): Promise<Neighbourhood> {
  return collect(plan(root, seeds, caps), (r) => answer(db, env, r));
}
