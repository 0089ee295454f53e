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

/** Whether a stored hash was made at another cost than `cost` (it is made again at the next sign-in). */
export function needsRehash(stored: string, cost: number): boolean {
  const [kind, n, r, p] = stored.split('$');
  const o = params(cost);
  return kind !== 'scrypt' || Number(n) !== o.N || Number(r) !== o.r || Number(p) !== o.p;
}

/**
 * The N of each padding hash a check of a hash stored at `storedN` needs to cost what one at
 * N = 2^cost does: the powers of two from storedN up to 2^cost, which sum with storedN to 2^cost
 * (scrypt's time is linear in N). None for a hash at the cost or above, or a malformed one.
 */
export function paddingCosts(storedN: number, cost: number): number[] {
  const target = 2 ** cost;
  if (!Number.isInteger(storedN) || storedN <= 0 || (storedN & (storedN - 1)) !== 0) return [];
  const out: number[] = [];
  for (let n = storedN; n < target; n *= 2) out.push(n);
  return out;
}

const PAD_SALT = Buffer.alloc(16);

/**
 * verifyPassword with at least the work of a hash at `cost`: a hash stored before the setting rose
 * is checked and then padded (paddingCosts), so a known account's wrong password takes as long as
 * an unknown address's check against dummyHash(cost), and a sign-in's time says nothing of whether
 * the account exists, whenever its password was set.
 */
export async function verifyPasswordAtCost(password: string, stored: string, cost: number): Promise<boolean> {
  const ok = await verifyPassword(password, stored);
  for (const N of paddingCosts(Number(stored.split('$')[1]), cost)) await derive('', PAD_SALT, { N, r: 8, p: 1 });
  return ok;
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
