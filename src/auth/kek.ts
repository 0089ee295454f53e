// The key-encryption key (KEK) that seals private signing keys in the store, so a copy of the
// database alone (a backup, a stolen file) cannot mint tokens. It comes from VOUCH_SECRET_KEY, or
// the file VOUCH_SECRET_KEY_FILE names, or else a file generated on first start beside the SQLite
// database (`./data/vouch.key` for PostgreSQL). Rotation: the old secret as
// VOUCH_SECRET_KEY_PREVIOUS; rows sealed under it are re-sealed under the new one at start.
import { createHash, hkdfSync, randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { type Config } from '../config/env.ts';
import { ConfigError } from '../config/env-values.ts';
import type { Store } from '../store/db.ts';
import { open, seal as sealWith, type KeyEncryption, type Purpose, type SealingKey } from '../lib/envelope.ts';

/** names the KEK in every sealed row: a wrong KEK is reported as such, never decrypts garbage */
export type Kek = SealingKey;

const MIN_SECRET = 32;
const KEY_FILE = 'vouch.key';

/** Any secret of at least 32 characters becomes a uniform 256-bit AES key. */
function deriveKek(secret: string): Kek {
  const key = Buffer.from(
    hkdfSync('sha256', Buffer.from(secret, 'utf8'), 'vouch/kek/v1', 'signing-key encryption', 32),
  );
  // A digest of the derived key, not the key: publishing it in rows reveals nothing usable.
  const id = createHash('sha256').update('vouch/kek-id/v1\0').update(key).digest('hex').slice(0, 16);
  return { id, key };
}

function readSecretFile(path: string, variable: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8').trim();
  } catch (err) {
    throw new ConfigError(`${variable}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (text.length < MIN_SECRET)
    throw new ConfigError(`${variable}: ${path} must hold at least ${MIN_SECRET} characters`);
  return text;
}

/**
 * The generated KEK file: created 0600 (its directory 0700 when we create it) with a 256-bit
 * random secret. Written under a temporary name and linked into place, so processes starting
 * together agree on one secret and none reads a half-written file.
 */
function generatedSecret(path: string): string {
  if (!existsSync(path)) {
    const dir = dirname(path);
    try {
      if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
      const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
      writeFileSync(temporary, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
      try {
        linkSync(temporary, path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      } finally {
        unlinkSync(temporary);
      }
    } catch (err) {
      // A container running as a non-root user in a root-owned directory (issue 29): one line
      // saying what to change, rather than a stack trace about mkdir.
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      const who = typeof process.getuid === 'function' ? ` (uid ${process.getuid()})` : '';
      throw new ConfigError(
        `cannot create the key-encryption key file ${path} (${code}): make ${dir} writable by this user${who}, ` +
          'or set VOUCH_SECRET_KEY or VOUCH_SECRET_KEY_FILE (docs/operations.md)',
      );
    }
  }
  return readSecretFile(path, 'the generated key-encryption key');
}

/** An in-memory SQLite store lives as long as the process; so does its KEK. */
let ephemeral: string | undefined;

/** Where the generated KEK lives for a store: beside a SQLite file, else ./data/vouch.key. */
function generatedKeyPath(store: Pick<Store, 'sqlite'>): string | undefined {
  const file = store.sqlite?.name;
  if (file === ':memory:' || file === '') return undefined;
  return file === undefined ? resolve('data', KEY_FILE) : join(dirname(resolve(file)), KEY_FILE);
}

/** The KEK this process seals and opens signing keys with. Throws ConfigError on a bad setting. */
export function resolveKeyEncryption(
  config: Pick<Config, 'secretKey' | 'secretKeyFile'>,
  store: Pick<Store, 'sqlite'>,
  env: Record<string, string | undefined> = process.env,
): KeyEncryption {
  let secret: string;
  let source: string;
  if (config.secretKey !== undefined) {
    secret = config.secretKey;
    source = 'VOUCH_SECRET_KEY';
  } else if (config.secretKeyFile !== undefined) {
    secret = readSecretFile(config.secretKeyFile, 'VOUCH_SECRET_KEY_FILE');
    source = `VOUCH_SECRET_KEY_FILE (${config.secretKeyFile})`;
  } else {
    const path = generatedKeyPath(store);
    secret = path === undefined ? (ephemeral ??= randomBytes(32).toString('base64url')) : generatedSecret(path);
    source = path ?? 'an in-memory key';
  }
  const previous: Kek[] = [];
  const old = env.VOUCH_SECRET_KEY_PREVIOUS;
  if (old !== undefined && old !== '') {
    if (old.length < MIN_SECRET)
      throw new ConfigError(`VOUCH_SECRET_KEY_PREVIOUS must be at least ${MIN_SECRET} characters`);
    previous.push(deriveKek(old));
  }
  return { current: deriveKek(secret), previous, source };
}

/** Signing keys are sealed under the KEK itself, marked so that a bare JWK from before encryption is told apart. */
const SIGNING_KEYS: Purpose = { marked: true };
// The kid is authenticated with the ciphertext: a sealed key moved onto another row fails to open.
const aad = (kid: string) => `vouch/signing-key/${kid}`;

export function seal(privateJwk: string, kid: string, kek: Kek): string {
  return sealWith(privateJwk, aad(kid), kek, SIGNING_KEYS);
}

export class SigningKeyDecryptionError extends ConfigError {}

/**
 * The private JWK (JSON text) of a stored row, and whether the row should be rewritten under the
 * current KEK: it is clear text (a store from before encryption) or sealed under a previous KEK.
 */
/** A private key stored before encryption at rest: a bare JWK rather than a sealed envelope. */
export function isClearText(stored: string): boolean {
  return (parseStored(stored, '?') as { sealed?: unknown }).sealed === undefined;
}

function parseStored(stored: string, kid: string): unknown {
  try {
    return JSON.parse(stored);
  } catch {
    throw new SigningKeyDecryptionError(
      `signing key ${kid} is stored in a form this version cannot read: the row was altered`,
    );
  }
}

export function unseal(stored: string, kid: string, enc: KeyEncryption): { jwk: string; reseal: boolean } {
  const value = parseStored(stored, kid) as { sealed?: unknown; kek?: unknown };
  if (value.sealed === undefined) return { jwk: stored, reseal: true };
  const opened = open(value as never, aad(kid), [enc.current, ...enc.previous], SIGNING_KEYS);
  if (opened.ok) return { jwk: opened.plaintext, reseal: opened.kek !== enc.current };
  if (opened.reason === 'unknown_kek') {
    throw new SigningKeyDecryptionError(
      `signing key ${kid} is encrypted with key-encryption key ${String(value.kek)}, but ${enc.source} gives key ${enc.current.id}; ` +
        'start with the VOUCH_SECRET_KEY (or VOUCH_SECRET_KEY_FILE, or vouch.key file) this store was created with, ' +
        'or pass that one as VOUCH_SECRET_KEY_PREVIOUS to re-encrypt under the new key',
    );
  }
  if (opened.reason === 'malformed')
    throw new SigningKeyDecryptionError(
      `signing key ${kid} is stored in a form this version cannot read: the row was altered`,
    );
  throw new SigningKeyDecryptionError(
    `signing key ${kid} fails its integrity check under key-encryption key ${opened.kekId}: the row was altered`,
  );
}
