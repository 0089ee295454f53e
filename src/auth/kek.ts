// The key-encryption key (KEK) that seals private signing keys in the store, so a copy of the
// database alone (a backup, a stolen file) cannot mint tokens. It comes from VOUCH_SECRET_KEY, or
// the file VOUCH_SECRET_KEY_FILE names, or else a file generated on first start beside the SQLite
// database (`./data/vouch.key` for PostgreSQL). Rotation: the old secret as
// VOUCH_SECRET_KEY_PREVIOUS; rows sealed under it are re-sealed under the new one at start.
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ConfigError, type Config } from '../config/env.ts';
import type { Store } from '../store/db.ts';

export interface Kek {
  /** names the KEK in every sealed row: a wrong KEK is reported as such, never decrypts garbage */
  id: string;
  key: Buffer;
}

export interface KeyEncryption {
  current: Kek;
  /** accepted for decryption only; their rows are re-sealed under `current` at start */
  previous: Kek[];
  /** where the KEK came from, for messages (never the secret itself) */
  source: string;
}

const MIN_SECRET = 32;
const KEY_FILE = 'vouch.key';

/** Any secret of at least 32 characters becomes a uniform 256-bit AES key. */
export function deriveKek(secret: string): Kek {
  const key = Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), 'vouch/kek/v1', 'signing-key encryption', 32));
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
  if (text.length < MIN_SECRET) throw new ConfigError(`${variable}: ${path} must hold at least ${MIN_SECRET} characters`);
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
  }
  return readSecretFile(path, 'the generated key-encryption key');
}

/** An in-memory SQLite store lives as long as the process; so does its KEK. */
let ephemeral: string | undefined;

/** Where the generated KEK lives for a store: beside a SQLite file, else ./data/vouch.key. */
export function generatedKeyPath(store: Pick<Store, 'sqlite'>): string | undefined {
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
    if (old.length < MIN_SECRET) throw new ConfigError(`VOUCH_SECRET_KEY_PREVIOUS must be at least ${MIN_SECRET} characters`);
    previous.push(deriveKek(old));
  }
  return { current: deriveKek(secret), previous, source };
}

/** A sealed private JWK as stored in signing_keys.private_jwk. */
interface Sealed {
  sealed: 'A256GCM';
  kek: string;
  iv: string;
  ct: string;
  tag: string;
}

// The kid is authenticated with the ciphertext: a sealed key moved onto another row fails to open.
const aad = (kid: string) => Buffer.from(`vouch/signing-key/${kid}`, 'utf8');

export function seal(privateJwk: string, kid: string, kek: Kek): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', kek.key, iv);
  cipher.setAAD(aad(kid));
  const ct = Buffer.concat([cipher.update(privateJwk, 'utf8'), cipher.final()]);
  const sealed: Sealed = { sealed: 'A256GCM', kek: kek.id, iv: iv.toString('base64url'), ct: ct.toString('base64url'), tag: cipher.getAuthTag().toString('base64url') };
  return JSON.stringify(sealed);
}

export class SigningKeyDecryptionError extends ConfigError {}

/**
 * The private JWK (JSON text) of a stored row, and whether the row should be rewritten under the
 * current KEK: it is clear text (a store from before encryption) or sealed under a previous KEK.
 */
/** A private key stored before encryption at rest: a bare JWK rather than a sealed envelope. */
export function isClearText(stored: string): boolean {
  return (parseStored(stored, '?') as Partial<Sealed>).sealed === undefined;
}

function parseStored(stored: string, kid: string): unknown {
  try {
    return JSON.parse(stored);
  } catch {
    throw new SigningKeyDecryptionError(`signing key ${kid} is stored in a form this version cannot read: the row was altered`);
  }
}

export function unseal(stored: string, kid: string, enc: KeyEncryption): { jwk: string; reseal: boolean } {
  const value = parseStored(stored, kid) as Partial<Sealed> & { d?: unknown };
  if (value.sealed === undefined) return { jwk: stored, reseal: true };
  const kek = [enc.current, ...enc.previous].find((k) => k.id === value.kek);
  if (!kek) {
    throw new SigningKeyDecryptionError(
      `signing key ${kid} is encrypted with key-encryption key ${String(value.kek)}, but ${enc.source} gives key ${enc.current.id}; ` +
        'start with the VOUCH_SECRET_KEY (or VOUCH_SECRET_KEY_FILE, or vouch.key file) this store was created with, ' +
        'or pass that one as VOUCH_SECRET_KEY_PREVIOUS to re-encrypt under the new key',
    );
  }
  try {
    const decipher = createDecipheriv('aes-256-gcm', kek.key, Buffer.from(String(value.iv), 'base64url'));
    decipher.setAAD(aad(kid));
    decipher.setAuthTag(Buffer.from(String(value.tag), 'base64url'));
    const jwk = Buffer.concat([decipher.update(Buffer.from(String(value.ct), 'base64url')), decipher.final()]).toString('utf8');
    return { jwk, reseal: kek !== enc.current };
  } catch {
    throw new SigningKeyDecryptionError(`signing key ${kid} fails its integrity check under key-encryption key ${kek.id}: the row was altered`);
  }
}
