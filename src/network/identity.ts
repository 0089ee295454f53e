// This deployment's network identity: an Ed25519 key pair that signs its requests and answers, and
// an OPRF key pair. Created once per store; the private halves are sealed under the
// key-encryption key (auth/kek.ts), so a copy of the database alone cannot impersonate it.
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { seal, unseal } from '../auth/kek.ts';
import { type KeyEncryption } from '../lib/envelope.ts';
import { b64, fromB64, generateOprfKey, type OprfKeyPair } from './oprf.ts';
import type { NetworkDb } from './tables.ts';
import { identityRow, identityRowOrThrow, insertIdentityIfAbsent, resealIdentity } from './publication-repository.ts';

const SIGNING_KID = 'network-signing';
const OPRF_KID = 'network-oprf';

export interface NetworkIdentity {
  /** base64url raw Ed25519 public key: what peers pin */
  signingKey: string;
  privateKey: KeyObject;
  oprf: OprfKeyPair;
  /** base64url ristretto255 public key */
  oprfPublicKey: string;
  /** when the identity was made: names the published set's epoch */
  createdAt: number;
}

/** A raw Ed25519 public key (base64url, 32 bytes) as a key object, or undefined if it is not one. */
export function ed25519PublicKey(raw: string): KeyObject | undefined {
  if (!fromB64(raw, 32)) return undefined;
  try {
    return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw }, format: 'jwk' });
  } catch {
    return undefined;
  }
}

export const signText = (identity: NetworkIdentity, text: string): string =>
  sign(null, Buffer.from(text, 'utf8'), identity.privateKey).toString('base64url');

export function verifyText(publicKey: KeyObject, text: string, signature: string): boolean {
  const bytes = fromB64(signature, 64);
  if (!bytes) return false;
  try {
    return verify(null, Buffer.from(text, 'utf8'), publicKey, bytes);
  } catch {
    return false;
  }
}

function generateRow(enc: KeyEncryption) {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const oprf = generateOprfKey();
  const jwk = privateKey.export({ format: 'jwk' });
  return {
    id: 'self',
    signing_private: seal(JSON.stringify(jwk), SIGNING_KID, enc.current),
    signing_public: String(publicKey.export({ format: 'jwk' }).x),
    oprf_secret: seal(b64(oprf.secretKey), OPRF_KID, enc.current),
    oprf_public: b64(oprf.publicKey),
    sync_lease_until: 0,
    state_version: 0,
    published_through: 0,
    created_at: Date.now(),
  };
}

/**
 * The identity of this store, created on first use. Processes starting together agree on one
 * (the insert does nothing when another won). Rows sealed under a previous KEK are re-sealed.
 */
export async function loadIdentity(db: NetworkDb, enc: KeyEncryption): Promise<NetworkIdentity> {
  let row = await identityRow(db);
  if (!row) {
    await insertIdentityIfAbsent(db, generateRow(enc));
    row = await identityRowOrThrow(db);
  }
  const signing = unseal(row.signing_private, SIGNING_KID, enc);
  const secret = unseal(row.oprf_secret, OPRF_KID, enc);
  if (signing.reseal || secret.reseal) {
    await resealIdentity(db, seal(signing.jwk, SIGNING_KID, enc.current), seal(secret.jwk, OPRF_KID, enc.current));
  }
  const privateKey = createPrivateKey({ key: JSON.parse(signing.jwk) as Record<string, string>, format: 'jwk' });
  return {
    signingKey: row.signing_public,
    privateKey,
    oprf: { secretKey: fromB64(secret.jwk, 32)!, publicKey: fromB64(row.oprf_public, 32)! },
    oprfPublicKey: row.oprf_public,
    createdAt: Number(row.created_at),
  };
}
