// Ed25519 signing keys, kept in the store so every instance signs and verifies with the same set.
// Rotation adds a key and retires the old one; a retired key stays published (and trusted) until
// every token it signed has expired. Private keys are stored sealed under the KEK (kek.ts).
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, type JWK, type CryptoKey, type KeyObject } from 'jose';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import { isClearText, seal, unseal } from './kek.ts';
import { type KeyEncryption } from '../lib/envelope.ts';
import { silentLog, type AuthLog } from './events.ts';
import {
  insertSigningKey,
  resealPrivateKey,
  retireCurrentSigningKeys,
  sealedPrivateKeys,
  sealedPrivateKeysByKid,
  signingKeyRows,
} from './signing-key-repository.ts';

type Key = CryptoKey | KeyObject;

interface LoadedKey {
  kid: string;
  publicJwk: JWK;
  publicKey: Key;
  /** opened on first use, and only for the current key: verifying needs no private key, so a
   *  process holding an older KEK still verifies tokens of a key sealed under a newer one */
  privateKey?: Key;
  sealed: string;
  createdAt: number;
  retiredAt: number | null;
}

export async function createSigningKey(db: Kysely<Database>, enc: KeyEncryption): Promise<string> {
  const { publicKey, privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const kid = randomUUID();
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: 'EdDSA', use: 'sig' };
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: 'EdDSA' };
  await insertSigningKey(db, {
    kid,
    private_jwk: seal(JSON.stringify(privateJwk), kid, enc.current),
    public_jwk: JSON.stringify(publicJwk),
    created_at: Date.now(),
    retired_at: null,
  });
  return kid;
}

/** Key rings of this process by store, so a rotation made here takes effect here at once. */
const ringsByDb = new WeakMap<Kysely<Database>, Set<KeyRing>>();

/**
 * Makes a new key current and retires the others, in one transaction (never a moment without a
 * current key); returns the new kid. Rings of this process on the same store switch to it on
 * their next use; other processes pick it up within 30 s (and verify its tokens at once).
 */
export async function rotateSigningKey(
  db: Kysely<Database>,
  enc: KeyEncryption,
  log: AuthLog = silentLog,
): Promise<string> {
  const now = Date.now();
  const kid = await db.transaction().execute(async (trx) => {
    // A rotation under the wrong KEK (say, the CLI run without the service's VOUCH_SECRET_KEY)
    // would leave the store with keys under two KEKs, which no process could start with: it
    // fails here instead, before anything is written.
    await sealSigningKeys(trx, enc, log);
    await retireCurrentSigningKeys(trx, now);
    return createSigningKey(trx, enc);
  });
  for (const ring of ringsByDb.get(db) ?? []) ring.markStale();
  log.info({ event: 'signing_key_rotated', kid, kek: enc.current.id }, 'signing key rotated');
  return kid;
}

/**
 * Seals every key (sealSigningKeys) and, when any was stored in clear (a store from before
 * encryption at rest), retires them all for a new sealed key: a key that was ever in clear is in
 * old pages and in every earlier backup, so it must not go on signing; it only verifies until its
 * tokens expire. Returns whether clear-text keys were found (the caller scrubs the file).
 */
export async function sealOrReplaceSigningKeys(
  db: Kysely<Database>,
  enc: KeyEncryption,
  log: AuthLog = silentLog,
): Promise<boolean> {
  const rows = await sealedPrivateKeys(db);
  const clearText = rows.some((row) => isClearText(row.private_jwk));
  await sealSigningKeys(db, enc, log);
  if (clearText) {
    await retireCurrentSigningKeys(db, Date.now());
    const kid = await createSigningKey(db, enc);
    log.info(
      { event: 'signing_key_replaced', kid, reason: 'clear_text_at_rest' },
      'signing keys stored in clear were sealed and retired; a new signing key replaces them (backups taken before hold the old private key, trusted only until its tokens expire)',
    );
  }
  return clearText;
}

/**
 * Seals every private key not yet sealed under the current KEK: clear-text rows of a store from
 * before encryption, and rows sealed under VOUCH_SECRET_KEY_PREVIOUS. Idempotent and safe to run
 * from several processes at once (each row is replaced only if it is still what was read).
 * Throws SigningKeyDecryptionError when a row is sealed under a KEK this process does not have.
 */
async function sealSigningKeys(db: Kysely<Database>, enc: KeyEncryption, log: AuthLog = silentLog): Promise<number> {
  const rows = await sealedPrivateKeysByKid(db);
  let resealed = 0;
  for (const row of rows) {
    const { jwk, reseal } = unseal(row.private_jwk, row.kid, enc);
    if (!reseal) continue;
    resealed += Number(await resealPrivateKey(db, row.kid, row.private_jwk, seal(jwk, row.kid, enc.current)));
  }
  if (resealed > 0)
    log.info(
      { event: 'signing_keys_sealed', count: resealed, kek: enc.current.id },
      'signing keys encrypted under the current key-encryption key',
    );
  return resealed;
}

export class KeyRing {
  private keys = new Map<string, LoadedKey>();
  private current: LoadedKey | undefined;
  private lastLoad = 0;
  private loading: Promise<void> | undefined;
  /** set by markStale; a reload already under way may have read the rows before the change */
  private stale = false;

  constructor(
    private readonly db: Kysely<Database>,
    /** how long a retired key stays trusted: the token lifetime plus clock leeway */
    private readonly retentionMs: number,
    private readonly enc: KeyEncryption,
  ) {
    let rings = ringsByDb.get(db);
    if (!rings) ringsByDb.set(db, (rings = new Set()));
    rings.add(this);
  }

  /** The next use re-reads the keys from the store. */
  markStale(): void {
    this.lastLoad = 0;
    this.stale = true;
  }

  /** Re-reads the keys from the store now. */
  refresh(): Promise<void> {
    return this.reload();
  }

  async init(): Promise<void> {
    // Usually done already by the serving process's start (server.ts); a store opened otherwise
    // (tests, embedding) gets its clear-text keys sealed and replaced here, and a wrong KEK fails here.
    await this.db.transaction().execute((trx) => sealOrReplaceSigningKeys(trx, this.enc));
    await this.reload();
    if (!this.current) {
      await createSigningKey(this.db, this.enc);
      await this.reload();
    }
  }

  private reload(): Promise<void> {
    this.loading ??= (async () => {
      try {
        this.stale = false;
        const rows = await signingKeyRows(this.db);
        const keys = new Map<string, LoadedKey>();
        let current: LoadedKey | undefined;
        for (const row of rows) {
          const existing = this.keys.get(row.kid);
          const loaded = existing ?? {
            kid: row.kid,
            publicJwk: JSON.parse(row.public_jwk) as JWK,
            publicKey: (await importJWK(JSON.parse(row.public_jwk) as JWK, 'EdDSA')) as Key,
            sealed: row.private_jwk,
            createdAt: row.created_at,
            retiredAt: row.retired_at,
          };
          loaded.retiredAt = row.retired_at;
          keys.set(row.kid, loaded);
          if (row.retired_at === null) current = loaded;
        }
        this.keys = keys;
        this.current = current;
        this.lastLoad = this.stale ? 0 : Date.now();
      } finally {
        this.loading = undefined;
      }
    })();
    return this.loading;
  }

  /** The key to sign with; picks up a rotation done by another process within 30 s. */
  async signingKey(): Promise<{ kid: string; key: Key }> {
    if (Date.now() - this.lastLoad > 30_000) await this.reload();
    const current = this.current;
    if (!current) throw new Error('no active signing key');
    current.privateKey ??= (await importJWK(
      JSON.parse(unseal(current.sealed, current.kid, this.enc).jwk) as JWK,
      'EdDSA',
    )) as Key;
    return { kid: current.kid, key: current.privateKey };
  }

  private trusted(key: LoadedKey | undefined, now: number): key is LoadedKey {
    return key !== undefined && (key.retiredAt === null || now - key.retiredAt < this.retentionMs);
  }

  /** A verification key by kid; an unknown kid triggers at most one reload a second. */
  async verificationKey(kid: string): Promise<Key | undefined> {
    const now = Date.now();
    let key = this.keys.get(kid);
    if (!key && now - this.lastLoad > 1000) {
      await this.reload();
      key = this.keys.get(kid);
    }
    return this.trusted(key, now) ? key.publicKey : undefined;
  }

  async jwks(): Promise<{ keys: JWK[] }> {
    if (Date.now() - this.lastLoad > 30_000) await this.reload();
    const now = Date.now();
    return { keys: [...this.keys.values()].filter((k) => this.trusted(k, now)).map((k) => k.publicJwk) };
  }
}
