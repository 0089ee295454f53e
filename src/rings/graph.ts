// The ring graph (docs/signals.md, "Rings"): entities linked through the identifiers they share.
// This module does no I/O. `plan` says which rows to read, hop by hop, and stops at the caps; a
// driver (the store's, src/rings/read.ts, or the quality bench's in-memory one) answers each
// request, so the score, the graph endpoint and the webhook fan-out read the same capped
// neighbourhood. `walkRing` turns the rows into distances, edges and hubs.

import type { Ring, RingFlag, RingNode } from '../model/ring.ts';

export interface IdentifierKey {
  idType: string;
  hash: string;
}

/** An entity's ring-relevant history: enough to say whether and why it is flagged, and since when. */
export interface RingEntity {
  entityId: string;
  fraudReports: number;
  blocklisted: boolean;
  chargebacks: number;
  disputesLost: number;
  /** last fraud report, blocklisting, chargeback or lost dispute (ms), 0 when unknown */
  flaggedAt: number;
}

/** One identifier held by one entity, with the identifier's holder count (identifier_stats). */
export interface HeldIdentifier extends IdentifierKey {
  entityId: string;
  holders: number;
}

export interface RingCaps {
  /** hops from the root, 1 … 3 */
  depth: number;
  /** identifiers held by more entities than this are hubs: reported, never traversed */
  fanout: number;
  /** identifiers read per hop */
  identifiersPerHop: number;
  /** holders read per hop */
  entitiesPerHop: number;
}

/** A read the plan needs: the identifiers (with holder counts) of entities, or the holders of identifiers. */
export type RingRequest =
  | { kind: 'identifiers'; entityIds: string[]; limit: number }
  | { kind: 'stats'; identifiers: IdentifierKey[] }
  | { kind: 'holders'; identifiers: IdentifierKey[]; limit: number };

export type RingResponse = HeldIdentifier[] | Array<HeldIdentifier & { entity: RingEntity }>;

export interface Neighbourhood {
  root: string;
  /** identifiers the request names on the root's behalf (a score's context.linked_identifiers) */
  seeds: IdentifierKey[];
  held: HeldIdentifier[];
  entities: Map<string, RingEntity>;
  /** a cap stopped the read: more of the neighbourhood exists than was read */
  truncated: boolean;
}

export const keyOf = (k: IdentifierKey): string => `${k.idType}\u0000${k.hash}`;

/**
 * The reads of a capped breadth-first walk from `root`, as a generator: each `yield` is a request
 * and receives its rows. Hubs (holders > fanout) are never expanded. Rows beyond a limit are not
 * read; the result says so (`truncated`).
 */
export function* plan(
  root: string,
  seeds: readonly IdentifierKey[],
  caps: RingCaps,
): Generator<RingRequest, Neighbourhood, RingResponse> {
  const held: HeldIdentifier[] = [];
  const entities = new Map<string, RingEntity>();
  const heldKeys = new Set<string>();
  const expanded = new Set<string>();
  const seen = new Set<string>([root]);
  let truncated = false;
  let frontier = [root];
  const uniqueSeeds = [...new Map(seeds.map((s) => [keyOf(s), { idType: s.idType, hash: s.hash }])).values()];
  for (let hop = 0; hop < caps.depth && frontier.length > 0; hop++) {
    const own = (yield {
      kind: 'identifiers',
      entityIds: frontier,
      limit: caps.identifiersPerHop + 1,
    }) as HeldIdentifier[];
    if (own.length > caps.identifiersPerHop) truncated = true;
    const candidates = own.slice(0, caps.identifiersPerHop);
    if (hop === 0 && uniqueSeeds.length > 0) {
      const stats = (yield { kind: 'stats', identifiers: uniqueSeeds }) as HeldIdentifier[];
      for (const s of stats) candidates.push({ ...s, entityId: root });
    }
    const toExpand: IdentifierKey[] = [];
    for (const h of candidates) {
      const link = `${keyOf(h)}\u0000${h.entityId}`;
      if (!heldKeys.has(link)) {
        heldKeys.add(link);
        held.push(h);
      }
      const key = keyOf(h);
      if (h.holders > caps.fanout || h.holders < 2 || expanded.has(key)) continue;
      expanded.add(key);
      toExpand.push({ idType: h.idType, hash: h.hash });
    }
    if (toExpand.length === 0) break;
    const rows = (yield { kind: 'holders', identifiers: toExpand, limit: caps.entitiesPerHop + 1 }) as Array<
      HeldIdentifier & { entity: RingEntity }
    >;
    if (rows.length > caps.entitiesPerHop) truncated = true;
    const next: string[] = [];
    for (const r of rows.slice(0, caps.entitiesPerHop)) {
      const link = `${keyOf(r)}\u0000${r.entityId}`;
      if (!heldKeys.has(link)) {
        heldKeys.add(link);
        held.push({ idType: r.idType, hash: r.hash, entityId: r.entityId, holders: r.holders });
      }
      if (r.entityId === root) continue;
      entities.set(r.entityId, r.entity);
      if (!seen.has(r.entityId)) {
        seen.add(r.entityId);
        next.push(r.entityId);
      }
    }
    frontier = next.sort();
  }
  return { root, seeds: uniqueSeeds, held, entities, truncated };
}

/** Runs a plan against a synchronous source (an in-memory history). */
export function collectSync(
  gen: Generator<RingRequest, Neighbourhood, RingResponse>,
  answer: (r: RingRequest) => RingResponse,
): Neighbourhood {
  let step = gen.next(undefined as never);
  while (!step.done) step = gen.next(answer(step.value));
  return step.value;
}

/** Runs a plan against an asynchronous source (the store). */
export async function collect(
  gen: Generator<RingRequest, Neighbourhood, RingResponse>,
  answer: (r: RingRequest) => Promise<RingResponse>,
): Promise<Neighbourhood> {
  let step = gen.next(undefined as never);
  while (!step.done) step = gen.next(await answer(step.value));
  return step.value;
}

export function flagsOf(e: RingEntity): RingFlag[] {
  const flags: RingFlag[] = [];
  if (e.fraudReports > 0) flags.push('fraud_reported');
  if (e.blocklisted) flags.push('blocklisted');
  if (e.chargebacks > 0) flags.push('chargeback');
  if (e.disputesLost > 0) flags.push('dispute_lost');
  return flags;
}

const byDistanceThenId = (a: RingNode, b: RingNode) =>
  a.distance - b.distance || (a.entityId < b.entityId ? -1 : a.entityId > b.entityId ? 1 : 0);

/**
 * Distances from the root over non-hub identifiers (the root's own and the seeds), at most
 * `depth` hops and `maxNodes` nodes (the root included; nearest first). Each shared identifier
 * becomes a star of edges from its nearest holder, so k holders give k − 1 edges, not k².
 */
export function walkRing(
  hood: Neighbourhood,
  depth: number,
  fanout: number,
  maxNodes = Number.POSITIVE_INFINITY,
): Ring {
  const byEntity = new Map<string, HeldIdentifier[]>();
  const byIdentifier = new Map<string, HeldIdentifier[]>();
  const hubs = new Map<string, { type: string; hash: string; entities: number }>();
  for (const h of hood.held) {
    const key = keyOf(h);
    if (h.holders > fanout) {
      hubs.set(key, { type: h.idType, hash: h.hash, entities: h.holders });
      continue;
    }
    byEntity.set(h.entityId, [...(byEntity.get(h.entityId) ?? []), h]);
    byIdentifier.set(key, [...(byIdentifier.get(key) ?? []), h]);
  }
  const nodes = new Map<string, RingNode>([
    [hood.root, { entityId: hood.root, distance: 0, flags: [], flaggedAt: 0, via: [] }],
  ]);
  let frontier = [hood.root];
  for (let d = 1; d <= depth && frontier.length > 0; d++) {
    const next: string[] = [];
    for (const from of frontier) {
      const parent = nodes.get(from)!;
      for (const h of (byEntity.get(from) ?? []).slice().sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : 1))) {
        for (const other of byIdentifier.get(keyOf(h)) ?? []) {
          if (nodes.has(other.entityId)) continue;
          const e = hood.entities.get(other.entityId);
          nodes.set(other.entityId, {
            entityId: other.entityId,
            distance: d,
            flags: e ? flagsOf(e) : [],
            flaggedAt: e?.flaggedAt ?? 0,
            via: [...parent.via, h.idType],
          });
          next.push(other.entityId);
        }
      }
    }
    frontier = next.sort();
  }
  const ordered = [...nodes.values()].sort(byDistanceThenId);
  const kept = ordered.slice(0, maxNodes);
  const keptIds = new Map(kept.map((n) => [n.entityId, n]));
  const edges: Ring['edges'] = [];
  for (const holders of byIdentifier.values()) {
    const inRing = holders
      .filter((h) => keptIds.has(h.entityId))
      .map((h) => keptIds.get(h.entityId)!)
      .sort(byDistanceThenId);
    const [centre, ...rest] = inRing;
    for (const n of rest)
      edges.push({ from: centre!.entityId, to: n.entityId, type: holders[0]!.idType, hash: holders[0]!.hash });
  }
  edges.sort((a, b) => (a.from + a.to + a.type + a.hash < b.from + b.to + b.type + b.hash ? -1 : 1));
  return {
    root: hood.root,
    nodes: kept,
    edges,
    hubs: [...hubs.values()].sort((a, b) => b.entities - a.entities || (a.hash < b.hash ? -1 : 1)),
    truncated: hood.truncated || kept.length < ordered.length,
  };
}
