// Digests and secrets shared by every feature: SHA-256 of text, constant-time comparison of
// digests, and a 256-bit random secret.
import * as crypto from 'node:crypto';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

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
