// Passwords (docs/api.md, "People"): scrypt from node:crypto, a memory-hard hash (OWASP's password
// storage guidance lists it beside argon2id), so no native package is needed. N = 2^15, r = 8, p = 1
// costs 32 MiB and tens of milliseconds a check, off the event loop (the async form runs on libuv's
// pool). The stored form names its parameters, so they can rise later without breaking old hashes.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const PARAMS = { N: 2 ** 15, r: 8, p: 1 } as const;
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

/** `scrypt$N$r$p$salt$hash`, salt and hash base64url. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join('$');
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

/** A hash no password matches, checked when the e-mail is unknown so a login takes as long either way. */
export const DUMMY_HASH = `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${'A'.repeat(22)}$${'A'.repeat(43)}`;
