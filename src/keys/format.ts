// API key format (CONTRACT §4): `vch_<env>_<43 base62 random><6 base62 CRC-32>`.
// The fixed prefix and offline-checkable checksum let secret scanners find leaked keys and let
// us reject typos without a database round trip. Only the SHA-256 of a key is ever stored.
import * as crypto from 'node:crypto';
import { createHash, randomBytes, randomFillSync, timingSafeEqual } from 'node:crypto';
import * as zlib from 'node:zlib';

export type ApiKeyEnv = 'live' | 'test';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LEN = 43; // 62^43 > 2^256, so 32 random bytes always fit
const CHECKSUM_LEN = 6; // 62^6 > 2^32
const HEAD_LEN = 'vch_live_'.length; // both environments have 4-letter names
const KEY_LEN = HEAD_LEN + RANDOM_LEN + CHECKSUM_LEN;

function base62(value: bigint, width: number): string {
  let out = '';
  while (value > 0n) {
    out = BASE62[Number(value % 62n)] + out;
    value /= 62n;
  }
  return out.padStart(width, '0');
}

// Table fallback only for runtimes older than Node 20.15, where zlib.crc32 is missing.
// Exported so the test can check it against zlib.
let crcTable: Uint32Array | undefined;
export function crc32Fallback(s: string): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (const byte of Buffer.from(s, 'utf8')) crc = crcTable[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

const crc32: (s: string) => number =
  typeof (zlib as { crc32?: unknown }).crc32 === 'function' ? (s) => zlib.crc32(s) : crc32Fallback;

function checksum(head: string): string {
  return base62(BigInt(crc32(head)), CHECKSUM_LEN);
}

export function generateApiKey(env: ApiKeyEnv): string {
  const random = base62(BigInt('0x' + randomBytes(32).toString('hex')), RANDOM_LEN);
  const head = `vch_${env}_${random}`;
  return head + checksum(head);
}

function isBase62(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ok = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
    if (!ok) return false;
  }
  return true;
}

/** Shape and checksum check only (no lookup); null for anything that is not a well-formed key. */
export function parseApiKey(raw: string): { env: ApiKeyEnv } | null {
  if (typeof raw !== 'string' || raw.length !== KEY_LEN) return null;
  let env: ApiKeyEnv;
  if (raw.startsWith('vch_live_')) env = 'live';
  else if (raw.startsWith('vch_test_')) env = 'test';
  else return null;
  const head = raw.slice(0, HEAD_LEN + RANDOM_LEN);
  const sum = raw.slice(HEAD_LEN + RANDOM_LEN);
  if (!isBase62(raw.slice(HEAD_LEN))) return null;
  // Compare the encoded strings, not numbers: a tampered checksum can decode above 2^32.
  return checksum(head) === sum ? { env } : null;
}

/** Shown in listings so a user can tell keys apart; never enough to authenticate. */
export function apiKeyPrefix(key: string): string {
  return key.slice(0, 16);
}

/** crypto.hash (Node 20.12+): a one-shot digest without a Hash object, about half the cost for short input. */
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex' | 'base64url') => string }).hash;

/** SHA-256 of the UTF-8 bytes of `s`, as hex or base64url. */
export function sha256(s: string, encoding: 'hex' | 'base64url'): string {
  return oneShot ? oneShot('sha256', s, encoding) : createHash('sha256').update(s, 'utf8').digest(encoding);
}

export function sha256Hex(s: string): string {
  return sha256(s, 'hex');
}

/** Constant-time comparison of two digests; length differences leak nothing secret (digests are fixed-size). */
export function safeEqualHex(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  if (x.length !== y.length) return false;
  return timingSafeEqual(x, y);
}

/** A client secret: 256 bits, URL/header safe. */
export function generateSecret(): string {
  return randomBytes(32).toString('base64url');
}

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
