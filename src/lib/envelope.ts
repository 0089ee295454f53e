// The sealed-secret envelope: every secret Vouch keeps at rest (signing keys, webhook secrets,
// stored idempotent responses, network keys) is AES-256-GCM under a key-encryption key (KEK),
// bound by its additional data to the row it belongs to, so a sealed value moved to another row
// does not open. A purpose may derive its own subkey from the KEK (HKDF), so one compromised
// purpose's ciphertexts say nothing about another's. Stored as JSON naming the KEK that sealed it.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** A key-encryption key: `id` names it in every sealed value, so a wrong KEK is reported as such. */
export interface SealingKey {
  id: string;
  key: Buffer;
}

/** Which key a purpose seals with: the KEK itself, or an HKDF subkey of it. */
export interface Purpose {
  /** HKDF salt and info; absent: the KEK itself (signing keys, sealed before subkeys existed) */
  subkey?: { salt: string; info: string };
  /** a `sealed: "A256GCM"` member in the JSON, which tells a sealed value from clear text */
  marked?: boolean;
}

export interface Sealed {
  sealed?: 'A256GCM';
  kek: string;
  iv: string;
  ct: string;
  tag: string;
}

const subkeys = new WeakMap<Buffer, Map<string, Buffer>>();

function keyFor(kek: SealingKey, purpose: Purpose): Buffer {
  if (!purpose.subkey) return kek.key;
  const { salt, info } = purpose.subkey;
  let derived = subkeys.get(kek.key);
  if (!derived) subkeys.set(kek.key, (derived = new Map()));
  const name = `${salt}\0${info}`;
  let key = derived.get(name);
  if (!key) derived.set(name, (key = Buffer.from(hkdfSync('sha256', kek.key, salt, info, 32))));
  return key;
}

export function seal(plaintext: string, aad: string, kek: SealingKey, purpose: Purpose = {}): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFor(kek, purpose), iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const sealed: Sealed = {
    ...(purpose.marked ? { sealed: 'A256GCM' as const } : {}),
    kek: kek.id,
    iv: iv.toString('base64url'),
    ct: ct.toString('base64url'),
    tag: cipher.getAuthTag().toString('base64url'),
  };
  return JSON.stringify(sealed);
}

export type OpenResult =
  | { ok: true; plaintext: string; kek: SealingKey }
  | { ok: false; reason: 'malformed' | 'unknown_kek' | 'integrity'; kekId?: string };

/** Opens a sealed value with whichever of `keks` sealed it; says why when it cannot. */
export function open(
  stored: string | Sealed,
  aad: string,
  keks: readonly SealingKey[],
  purpose: Purpose = {},
): OpenResult {
  let value: Partial<Sealed>;
  try {
    value = typeof stored === 'string' ? (JSON.parse(stored) as Partial<Sealed>) : stored;
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  if (
    typeof value !== 'object' ||
    value === null ||
    typeof value.iv !== 'string' ||
    typeof value.ct !== 'string' ||
    typeof value.tag !== 'string'
  )
    return { ok: false, reason: 'malformed' };
  const kek = keks.find((k) => k.id === value.kek);
  if (!kek) return { ok: false, reason: 'unknown_kek', ...(typeof value.kek === 'string' ? { kekId: value.kek } : {}) };
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyFor(kek, purpose), Buffer.from(value.iv, 'base64url'));
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(Buffer.from(value.tag, 'base64url'));
    const plaintext = Buffer.concat([decipher.update(Buffer.from(value.ct, 'base64url')), decipher.final()]).toString(
      'utf8',
    );
    return { ok: true, plaintext, kek };
  } catch {
    return { ok: false, reason: 'integrity', kekId: kek.id };
  }
}

/** The key-encryption keys (src/auth/kek.ts): the one that seals, and older ones that still open. */
export interface KeyEncryption {
  current: SealingKey;
  /** accepted for decryption only; their rows are re-sealed under `current` at start */
  previous: SealingKey[];
  /** where the KEK came from, for messages (never the secret itself) */
  source: string;
}
