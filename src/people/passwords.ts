// Passwords (docs/api.md, "People"): scrypt from node:crypto, a memory-hard hash (OWASP's password
// storage guidance lists it beside argon2id), so no native package is needed. N = 2^cost, r = 8,
// p = 1; the cost is VOUCH_PASSWORD_COST, 17 by default (OWASP's floor for scrypt: 128 MiB and a few
// hundred milliseconds a check), off the event loop (the async form runs on libuv's pool). The stored
// form names its parameters: a hash made at a lower cost still verifies, and is made again at the
// current cost at the person's next sign-in (needsRehash).
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const params = (cost: number) => ({ N: 2 ** cost, r: 8, p: 1 });
const KEY_LENGTH = 32;
/** 128·N·r bytes and a margin: Node refuses to exceed maxmem. */
const maxmem = (o: { N: number; r: number }) => 128 * o.N * o.r * 2;

/** The length rules (ASVS 2.1.1–2.1.2): at least 12 characters, at most 256 (a bound on the work a login costs). */
export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 256;

function derive(password: string, salt: Buffer, o: { N: number; r: number; p: number }): Promise<Buffer> {
  const options: ScryptOptions = { N: o.N, r: o.r, p: o.p, maxmem: maxmem(o) };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** `scrypt$N$r$p$salt$hash`, salt and hash base64url, at N = 2^cost. */
export async function hashPassword(password: string, cost: number): Promise<string> {
  const o = params(cost);
  const salt = randomBytes(16);
  const key = await derive(password, salt, o);
  return ['scrypt', o.N, o.r, o.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** Whether a stored hash was made with less work than `cost` asks for (it is made again at sign-in). */
export function needsRehash(stored: string, cost: number): boolean {
  const [kind, n, r, p] = stored.split('$');
  const o = params(cost);
  return kind !== 'scrypt' || Number(n) < o.N || Number(r) < o.r || Number(p) < o.p;
}

/** Whether `password` matches `stored`; false for a malformed stored value. Constant time in the comparison. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, hash] = stored.split('$');
  const o = { N: Number(n), r: Number(r), p: Number(p) };
  if (kind !== 'scrypt' || !salt || !hash || ![o.N, o.r, o.p].every((x) => Number.isInteger(x) && x > 0)) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(password, Buffer.from(salt, 'base64url'), o);
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/**
 * A hash no password matches at `cost`, checked when the e-mail is unknown so a login takes as long
 * either way.
 */
export function dummyHash(cost: number): string {
  const o = params(cost);
  return `scrypt$${o.N}$${o.r}$${o.p}$${'A'.repeat(22)}$${'A'.repeat(43)}`;
}
