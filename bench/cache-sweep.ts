// The score cache's expiry sweep, in process (issue 42): fills the cache with 16,000 entries, lets
// them expire on a moved clock, and reports the longest time the event loop waited on the sweep —
// the gap between two turns of a setImmediate ticker — for lru-cache's purgeStale in one go (the
// sweep before) and ScoreCache.sweep a slice a turn (after). Run:
// NODE_OPTIONS=--expose-gc npx tsx bench/cache-sweep.ts [runs]   (GAPS=1 prints every gap)
import { performance } from 'node:perf_hooks';
import { LRUCache } from 'lru-cache';
import { ScoreCache, type CachedScore } from '../src/trust/cache.ts';

const ENTRIES = 16_000;
const TTL_MS = 60_000;
const runs = Number(process.argv[2] ?? 5);

let fake = 1_000;
const clock = { now: () => fake };
const json = JSON.stringify({ decision: 'x'.repeat(900) });
const entry = (i: number) => ({
  json: `${json}${i}`,
  entityId: `e${i}`,
  riskLevel: 'low',
  principalId: 'cli_bench',
  state: `s${i}`,
  generation: i,
});

// Run with --expose-gc (NODE_OPTIONS) so the previous run's garbage is collected before a sweep, not
// during it: a full collection there is the collector's pause, not the sweep's.
const gc = (globalThis as { gc?: () => void }).gc;

const medians: number[] = [];
const turns: number[] = [];
const clears = { before: [] as number[], after: [] as number[] };
/** per run, the longest gap in which the process was not preempted (no involuntary context switch) */
const unpreempted: number[] = [];
const preemptions = () => process.resourceUsage().involuntaryContextSwitches;

/**
 * Runs `work` while a ticker turns: the longest gap between two turns and the median one, in ms.
 * On a shared machine the longest also holds whatever else took the core; the median does not, nor
 * the longest of the gaps with no involuntary context switch.
 */
async function longestHold(work: () => Promise<void>, record = true): Promise<number> {
  gc?.();
  const gaps: number[] = [];
  let quiet = 0;
  let last = performance.now();
  let lastSwitches = preemptions();
  let running = true;
  const tick = () => {
    const now = performance.now();
    const switches = preemptions();
    gaps.push(now - last);
    if (switches === lastSwitches) quiet = Math.max(quiet, now - last);
    last = now;
    lastSwitches = switches;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  await new Promise((resolve) => setImmediate(resolve));
  await work();
  running = false;
  await new Promise((resolve) => setImmediate(resolve));
  if (process.env.GAPS) console.log(gaps.map((g) => g.toFixed(2)).join(' '));
  gaps.sort((a, b) => a - b);
  if (record) {
    medians.push(gaps[gaps.length >> 1]!);
    unpreempted.push(quiet);
    turns.push(gaps.length);
  }
  return gaps[gaps.length - 1]!;
}

async function before(): Promise<{ hold: number; left: number }> {
  // The options ScoreCache had, with purgeStale as its timer ran it.
  const lru = new LRUCache<string, CachedScore>({
    max: ENTRIES,
    maxSize: 32 * 1024 * 1024,
    sizeCalculation: (e) => Math.max(1, e.size),
    ttl: TTL_MS,
    ttlAutopurge: false,
    noUpdateTTL: true,
    perf: clock,
    ttlResolution: 0,
  });
  for (let i = 0; i < ENTRIES; i++) lru.set(`k${i}`, { ...entry(i), size: 2 * json.length + 200 });
  fake += TTL_MS + 1;
  const hold = await longestHold(async () => {
    lru.purgeStale();
  });
  const left = lru.size;
  for (let i = 0; i < ENTRIES; i++) lru.set(`k${i}`, { ...entry(i), size: 2 * json.length + 200 });
  clears.before.push(await longestHold(async () => lru.clear(), false));
  return { hold, left };
}

async function after(): Promise<{ hold: number; left: number }> {
  const cache = new ScoreCache(TTL_MS / 1000, { clock });
  for (let i = 0; i < ENTRIES; i++) cache.set(`k${i}`, entry(i));
  fake += TTL_MS + 1;
  const hold = await longestHold(() => cache.sweep());
  const left = cache.size;
  for (let i = 0; i < ENTRIES; i++) cache.set(`k${i}`, entry(i));
  clears.after.push(await longestHold(async () => cache.clear(), false));
  return { hold, left };
}

const fmt = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(', ');
const every = (xs: number[], from: number) => xs.filter((_, i) => i % 2 === from);
const holds = { before: [] as number[], after: [] as number[] };
for (let r = 0; r < runs; r++) {
  const b = await before();
  const a = await after();
  if (b.left !== 0 || a.left !== 0) throw new Error(`entries left: before ${b.left}, after ${a.left}`);
  holds.before.push(b.hold);
  holds.after.push(a.hold);
}
console.log(
  `${ENTRIES} expired entries, ${runs} runs${gc ? '' : ' (no --expose-gc)'}, longest hold of the event loop (ms)`,
);
console.log(`before (purgeStale at once):     ${fmt(holds.before)}`);
console.log(`after  (ScoreCache.sweep slices): ${fmt(holds.after)}`);
console.log(`longest not preempted, before: ${fmt(every(unpreempted, 0))}; after: ${fmt(every(unpreempted, 1))}`);
console.log(`median turn, before: ${fmt(every(medians, 0))}; after: ${fmt(every(medians, 1))}`);
console.log(`turns, before: ${every(turns, 0).join(', ')}; after: ${every(turns, 1).join(', ')}`);
console.log(`clear of ${ENTRIES} entries, before (lru.clear): ${fmt(clears.before)}`);
console.log(`clear of ${ENTRIES} entries, after (a new cache): ${fmt(clears.after)}`);
