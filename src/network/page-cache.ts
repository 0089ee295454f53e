// Recently served flags pages (docs/network.md, "A peer's request rate"): a page of 5,000 entries
// is ~0.1 s of main-thread work (reading, sealing, serialising), and a peer asking the same page
// again gets the same answer from memory. An entry is keyed by everything the page depends on —
// the peer, its epoch, since, cursor, limit and the head of the published set (every change of
// the set, a withdrawal or an erasure included, moves the head) — so a stale page is never
// served; it lives CACHE_TTL_MS at most, and the cache holds CACHE_MAX_ENTRIES entries in all.
import type { FlagsPage } from './flags-page.ts';
import type { NetworkDb } from './tables.ts';
import { publishedHead } from './publication-repository.ts';

const CACHE_TTL_MS = 30_000;
/** Flag entries held over all cached pages (~0.2 KB each): a few MB at most. */
const CACHE_MAX_ENTRIES = 20_000;

export interface PageKey {
  peerId: string;
  epoch: string;
  since: number;
  cursor: string | undefined;
  limit: number;
}

export interface PageCache {
  /** the page as computed by `compute`, or as served a moment ago for the same key and head of the set */
  get(db: NetworkDb, key: PageKey, compute: () => Promise<FlagsPage>): Promise<{ page: FlagsPage; cached: boolean }>;
}

export function pageCache(now: () => number = Date.now): PageCache {
  // Insertion order is age order: the oldest go first when the bound is reached.
  const pages = new Map<string, { page: FlagsPage; at: number }>();
  let held = 0;
  const drop = (name: string) => {
    const entry = pages.get(name);
    if (!entry) return;
    held -= entry.page.entries.length;
    pages.delete(name);
  };
  return {
    async get(db, key, compute) {
      const head = await publishedHead(db);
      const name = JSON.stringify([key.peerId, key.epoch, key.since, key.cursor ?? '', key.limit, head]);
      const hit = pages.get(name);
      if (hit && now() - hit.at <= CACHE_TTL_MS) return { page: hit.page, cached: true };
      drop(name);
      const page = await compute();
      if (page.entries.length <= CACHE_MAX_ENTRIES) {
        for (const [old, entry] of pages) {
          if (held + page.entries.length <= CACHE_MAX_ENTRIES && now() - entry.at <= CACHE_TTL_MS) break;
          drop(old);
        }
        pages.set(name, { page, at: now() });
        held += page.entries.length;
      }
      return { page, cached: false };
    },
  };
}
