// Seeded randomness for the quality simulation: mulberry32 (fast, 32-bit state, good enough for
// simulation) plus the few distributions the market needs. Same seed, same stream, on any machine.

export type Random = () => number;

export function mulberry32(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Standard normal by Box–Muller (one of the pair; simplicity over speed). */
export function normal(random: Random): number {
  const u = 1 - random();
  const v = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

export const logNormal = (random: Random, median: number, sigma: number): number =>
  median * Math.exp(sigma * normal(random));

/** Exponential waiting time with the given mean. */
export const exponential = (random: Random, mean: number): number => -Math.log(1 - random()) * mean;

export const chance = (random: Random, p: number): boolean => random() < p;

export function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

/** Picks a key with probability proportional to its weight. */
export function weighted<K extends string>(random: Random, table: Readonly<Partial<Record<K, number>>>): K {
  const entries = (Object.entries(table) as [K, number | undefined][]).filter(
    (e): e is [K, number] => e[1] !== undefined && e[1] > 0,
  );
  if (entries.length === 0) throw new RangeError('weighted: no positive weight');
  let r = random() * entries.reduce((a, [, w]) => a + w, 0);
  for (const [k, w] of entries) {
    r -= w;
    if (r < 0) return k;
  }
  return entries[entries.length - 1]![0];
}

export function poisson(random: Random, mean: number): number {
  // Knuth for small means, a rounded normal approximation for large ones.
  if (mean > 30) return Math.max(0, Math.round(mean + Math.sqrt(mean) * normal(random)));
  const limit = Math.exp(-mean);
  let k = 0;
  for (let p = random(); p > limit; p *= random()) k++;
  return k;
}
