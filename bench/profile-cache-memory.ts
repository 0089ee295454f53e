// `node --expose-gc --import tsx bench/profile-cache-memory.ts`: the memory one full profile cache
// (src/trust/profile-cache.ts) holds: its entries filled from the profiling store (bench/profile-run.ts
// builds /work/prof/bench.db; DB=… for another), measured as heap and typed-array memory after a full
// collection, before and after — the slots of the rows included.
import { openStore } from '../src/store/db.ts';
import { ProfileCache, PROFILE_CACHE_ENTRIES } from '../src/trust/profile-cache.ts';
import { entityId } from './data.ts';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const store = openStore(`sqlite:${process.env.DB ?? '/work/prof/bench.db'}`);
const now = Date.now();
gc();
const before = process.memoryUsage();
const cache = new ProfileCache(store);
(globalThis as { keep?: unknown }).keep = cache; // alive through the last collection
for (let i = 0; i < PROFILE_CACHE_ENTRIES / 2; i++) {
  for (const currency of ['USD', 'EUR'])
    await cache.load({
      environment: 'live',
      entityId: entityId(i),
      currency,
      counterpartyId: entityId(i + 1),
      now,
      ringFanout: 50,
    });
}
gc();
const after = process.memoryUsage();
const perEntry = (after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers) / PROFILE_CACHE_ENTRIES;
console.log(
  `${PROFILE_CACHE_ENTRIES} entries: ${perEntry.toFixed(0)} bytes each (heap and typed arrays), ${((perEntry * PROFILE_CACHE_ENTRIES) / 2 ** 20).toFixed(1)} MiB in all`,
);
await store.close();
