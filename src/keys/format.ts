// API key format (docs/api.md; the OpenAPI document's ApiKey): `vch_<env>_<43 base62 random><6 base62 CRC-32>`.
// The fixed prefix and offline-checkable checksum let secret scanners find leaked keys and let
// us reject typos without a database round trip. Only the SHA-256 of a key is ever stored.
import { randomBytes } from 'node:crypto';
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
