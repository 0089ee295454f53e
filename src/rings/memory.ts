// An in-memory answer to the ring plan (src/rings/graph.ts), with the store's orderings and limits
// (src/rings/read.ts): the quality bench's offline history reads rings through it, so its ring
// signals are the ones the store would give.
import {
  collectSync,
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

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export class MemoryGraph {
  /** entity → its identifier keys */
  private readonly held = new Map<string, Map<string, IdentifierKey>>();
  /** identifier key → holders */
  private readonly holders = new Map<string, Set<string>>();

  constructor(private readonly entity: (id: string) => RingEntity | undefined) {}

  link(entityId: string, idType: string, hash: string): void {
    const key = keyOf({ idType, hash });
    let own = this.held.get(entityId);
    if (!own) this.held.set(entityId, (own = new Map()));
    own.set(key, { idType, hash });
    let hs = this.holders.get(key);
    if (!hs) this.holders.set(key, (hs = new Set()));
    hs.add(entityId);
  }

  /** The rows the store would return for `r` (src/rings/read.ts), in its order and limit. */
  answer(r: RingRequest): RingResponse {
    if (r.kind === 'identifiers') {
      const rows: HeldIdentifier[] = [];
      for (const e of [...r.entityIds].sort(cmp)) {
        const own = [...(this.held.get(e)?.values() ?? [])].sort(
          (a, b) => cmp(a.idType, b.idType) || cmp(a.hash, b.hash),
        );
        for (const k of own) rows.push({ ...k, entityId: e, holders: this.holders.get(keyOf(k))!.size });
      }
      return rows.slice(0, r.limit);
    }
    if (r.kind === 'stats') {
      return r.identifiers
        .filter((k) => this.holders.has(keyOf(k)))
        .map((k) => ({ ...k, entityId: '', holders: this.holders.get(keyOf(k))!.size }));
    }
    const rows: Array<HeldIdentifier & { entity: RingEntity }> = [];
    for (const k of [...r.identifiers].sort((a, b) => cmp(a.idType, b.idType) || cmp(a.hash, b.hash))) {
      const hs = this.holders.get(keyOf(k));
      if (!hs) continue;
      for (const e of [...hs].sort(cmp)) {
        const entity = this.entity(e);
        if (entity) rows.push({ ...k, entityId: e, holders: hs.size, entity });
      }
    }
    return rows.slice(0, r.limit);
  }

  neighbourhood(root: string, seeds: readonly IdentifierKey[], caps: RingCaps): Neighbourhood {
    return collectSync(plan(root, seeds, caps), (r) => this.answer(r));
  }

  /** Whether `root` or a seed shares an identifier with another entity (the score reads no ring otherwise). */
  shares(root: string, seeds: readonly IdentifierKey[]): boolean {
    const keys = new Set([...(this.held.get(root)?.keys() ?? []), ...seeds.map(keyOf)]);
    for (const k of keys) {
      const hs = this.holders.get(k);
      if (hs && [...hs].some((e) => e !== root)) return true;
    }
    return false;
  }
}
