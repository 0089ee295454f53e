// What a list of expiring entries costs a serving process (docs/benchmarks.md, "Lists"): the
// reload per change while an environment fills with entries that expire, the heap they hold, and
// the heap once they expired; then an add with the environment at its bound. One process, SQLite.
// Run: node --expose-gc --import tsx bench/list-expiry.ts [entries]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/db.ts';
import { RuleRegistry } from '../src/rules/registry.ts';
import { ChangeFeed } from '../src/store/change-feed.ts';
import { addListEntries, createList } from '../src/rules/lists.ts';

const total = Number(process.argv[2] ?? 200_000);
const batch = 1000;
const dir = mkdtempSync(join(tmpdir(), 'vouch-bench-lists-'));
const store = openStore(`sqlite:${join(dir, 'v.db')}`);
await store.migrate();
const feed = new ChangeFeed(store);
const registry = new RuleRegistry(store);
const heapMb = () => {
  (globalThis as { gc?: () => void }).gc?.();
  return Math.round(process.memoryUsage().heapUsed / 2 ** 20);
};
const now = Date.now();
await createList(store.db, feed, { environment: 'live', by: 'bench', now }, { name: 'brief', kind: 'entity' });
await registry.reload('live');
const base = heapMb();
const reloads: number[] = [];
const adds: number[] = [];
for (let i = 0; i < total; i += batch) {
  const values = Array.from({ length: batch }, (_, j) => (i + j).toString(16).padStart(64, '0'));
  let t = performance.now();
  await addListEntries(store.db, 'live', 'brief', values, 'bench', { expiresAt: now + 3_600_000 }, now);
  adds.push(performance.now() - t);
  t = performance.now();
  await registry.reload('live');
  reloads.push(performance.now() - t);
}
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)]!.toFixed(1);
const full = heapMb();
console.log(
  `${total} expiring entries: add p50 ${pct(adds, 0.5)} ms, max ${pct(adds, 1)} ms; reload p50 ${pct(reloads, 0.5)} ms, max ${pct(reloads, 1)} ms`,
);
console.log(`heap: ${base} MB before, ${full} MB held (${(((full - base) * 2 ** 20) / total).toFixed(0)} B/entry)`);
let t = performance.now();
await new RuleRegistry(store).reload('live');
console.log(`a process starting with them loads them in ${(performance.now() - t).toFixed(0)} ms`);
t = performance.now();
let calls = 0;
while (registry.revision('live', now + 3_600_000).includes('~')) calls++;
const prune = performance.now() - t;
console.log(
  `after expiry: ${calls + 1} scores' revision calls dropped them in ${prune.toFixed(0)} ms (≤ 5,000 a call); heap ${heapMb()} MB, held ${registry.summary('live').entries}`,
);
t = performance.now();
await addListEntries(store.db, 'live', 'brief', ['f'.repeat(64)], 'bench', {}, now + 3_600_001);
console.log(
  `an add passing the bound, which sweeps the ${total} expired entries in slices: ${(performance.now() - t).toFixed(0)} ms`,
);
t = performance.now();
await addListEntries(
  store.db,
  'live',
  'brief',
  ['e'.repeat(64)],
  'bench',
  { bound: { entries: 2, chars: 1e9 } },
  now + 3_600_002,
);
console.log(
  `adds at the bound: ${(performance.now() - t).toFixed(1)} ms, then ` +
    `${await (async () => {
      const s = performance.now();
      await addListEntries(
        store.db,
        'live',
        'brief',
        ['d'.repeat(64)],
        'bench',
        { bound: { entries: 3, chars: 1e9 } },
        now + 3_600_003,
      );
      return (performance.now() - s).toFixed(1);
    })()} ms`,
);
await store.close();
rmSync(dir, { recursive: true, force: true });
