// A person's optional second factor (docs/api.md, "People"): TOTP (RFC 6238, 6 digits, 30 s, SHA-1
// as every authenticator app reads it) with the `otpauth` package, and ten one-time recovery codes.
// The secret is sealed at rest (lib/envelope.ts, a subkey of its own, bound to the user); a code is
// accepted once (the last accepted time step is kept), one step either side of now for clock skew.
import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import { open, seal, type KeyEncryption, type Purpose } from '../lib/envelope.ts';
import { sha256Hex } from '../lib/digest.ts';
import { swapRecoveryCodes, takeTotpStep, updateUser, type UserRow } from './repository.ts';

const PURPOSE: Purpose = { subkey: { salt: 'vouch-totp', info: 'person second factor' }, marked: true };
const aad = (userId: string) => `totp:${userId}`;
const PERIOD_S = 30;
const RECOVERY_CODES = 10;

const totpOf = (secret: string, label: string) =>
  new TOTP({ issuer: 'Vouch', label, secret: Secret.fromBase32(secret), digits: 6, period: PERIOD_S });

function opened(sealed: string, userId: string, enc: KeyEncryption): string | undefined {
  const result = open(sealed, aad(userId), [enc.current, ...enc.previous], PURPOSE);
  return result.ok ? result.plaintext : undefined;
}

/** A new secret waiting to be confirmed: what an authenticator app scans. */
export async function enrollTotp(db: Kysely<Database>, user: UserRow, enc: KeyEncryption) {
  const secret = new Secret({ size: 20 }).base32;
  await updateUser(db, user.id, { totp_pending: seal(secret, aad(user.id), enc.current, PURPOSE) });
  return { secret, otpauth_url: totpOf(secret, user.email).toString() };
}

/** The 30-second step `code` belongs to, within one step of now; undefined when it matches none. */
function stepOf(secret: string, label: string, code: string, now: number): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const delta = totpOf(secret, label).validate({ token: code, timestamp: now, window: 1 });
  return delta === null ? undefined : Math.floor(now / 1000 / PERIOD_S) + delta;
}

const newRecoveryCodes = (): string[] =>
  Array.from({ length: RECOVERY_CODES }, () =>
    randomBytes(8)
      .toString('hex')
      .replace(/(.{4})(?!$)/g, '$1-'),
  );

/** Confirms the enrolment with a first code: the second factor is on; the recovery codes are shown once. */
export async function confirmTotp(
  db: Kysely<Database>,
  user: UserRow,
  code: string,
  enc: KeyEncryption,
  now = Date.now(),
): Promise<string[] | undefined> {
  const secret = user.totp_pending ? opened(user.totp_pending, user.id, enc) : undefined;
  const step = secret ? stepOf(secret, user.email, code, now) : undefined;
  if (secret === undefined || step === undefined) return undefined;
  const codes = newRecoveryCodes();
  await updateUser(db, user.id, {
    totp_secret: user.totp_pending,
    totp_pending: null,
    totp_enabled_at: now,
    totp_last_step: step,
    recovery_codes: JSON.stringify(codes.map((c) => sha256Hex(c))),
    updated_at: now,
  });
  return codes;
}

/**
 * Whether `code` (six digits) or `recovery` (a recovery code, used up) passes the second factor of
 * `user`. A code of a step already used, or older, fails: it cannot be replayed.
 */
export async function checkSecondFactor(
  db: Kysely<Database>,
  user: UserRow,
  given: { totp?: string; recovery_code?: string },
  enc: KeyEncryption,
  now = Date.now(),
): Promise<boolean> {
  if (given.recovery_code !== undefined) {
    const digests = JSON.parse(user.recovery_codes ?? '[]') as string[];
    const digest = sha256Hex(given.recovery_code.trim().toLowerCase());
    if (user.recovery_codes === null || !digests.includes(digest)) return false;
    const left = JSON.stringify(digests.filter((d) => d !== digest));
    return swapRecoveryCodes(db, user.id, user.recovery_codes, left);
  }
  const secret = user.totp_secret ? opened(user.totp_secret, user.id, enc) : undefined;
  const step = secret && given.totp ? stepOf(secret, user.email, given.totp, now) : undefined;
  return step !== undefined && takeTotpStep(db, user.id, step);
}

/** Turns the second factor off (the person, with a valid code; or an admin resetting a lost device). */
export async function disableTotp(db: Kysely<Database>, userId: string, now = Date.now()): Promise<void> {
  await updateUser(db, userId, {
    totp_secret: null,
    totp_pending: null,
    totp_enabled_at: null,
    totp_last_step: null,
    recovery_codes: null,
    updated_at: now,
  });
}
