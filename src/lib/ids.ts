// Identifiers: `<prefix>_<ULID>`, sortable by creation time within a process.
import { randomFillSync } from 'node:crypto';

// ULID: 48-bit ms timestamp + 80 random bits, Crockford base32, 26 chars. Within one millisecond
// (or if the clock steps back) we increment the last random part, so ids created by this process
// sort in creation order — listings use them as a "newest first" tie-break and cursor.
// The 80 random bits are kept as two 40-bit halves (exact in doubles), and the random bytes come
// from a pool refilled by one randomFillSync per 256 ids rather than a call per id.
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const HALF = 2 ** 40;
const POOL_IDS = 256;
const pool = Buffer.alloc(10 * POOL_IDS);
let poolAt = pool.length;
let lastTime = -1;
let randomHi = 0;
let randomLo = 0;

/** `digits` base32 characters of a non-negative integer below 2^53, most significant first. */
function base32(value: number, digits: number): string {
  let out = '';
  for (let i = digits - 1; i >= 0; i--) out += CROCKFORD[Math.floor(value / 32 ** i) % 32];
  return out;
}

/** The ULID of millisecond `time` (below 2^48) and random part hi·2^40 + lo (each half below 2^40). */
export function encodeUlid(time: number, hi: number, lo: number): string {
  return base32(time, 10) + base32(hi, 8) + base32(lo, 8);
}

function freshRandom(): void {
  if (poolAt === pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  randomHi = pool.readUIntBE(poolAt, 5);
  randomLo = pool.readUIntBE(poolAt + 5, 5);
  poolAt += 10;
}

export function ulid(now: number = Date.now()): string {
  if (now > lastTime) {
    lastTime = now;
    freshRandom();
  } else if (randomLo < HALF - 1) {
    randomLo += 1;
  } else if (randomHi < HALF - 1) {
    randomLo = 0;
    randomHi += 1;
  } else {
    // 2^80 ids in one millisecond cannot happen in practice; borrow the next millisecond.
    lastTime += 1;
    freshRandom();
  }
  return encodeUlid(lastTime, randomHi, randomLo);
}

export function newId(prefix: string): string {
  return `${prefix}_${ulid()}`;
}
