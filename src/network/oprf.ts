// The network's cryptography (docs/network.md, "Protocol"): RFC 9497 VOPRF on ristretto255-SHA512
// (@noble/curves), the tag and label key derived from a PRF output, and the sealed label.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { ristretto255, ristretto255_oprf } from '@noble/curves/ed25519.js';

const suite = ristretto255_oprf.voprf;
/** RFC 9497 Evaluate (the server's own, non-interactive PRF); present at runtime, absent from the typings. */
const direct = suite as unknown as { evaluate(secretKey: Uint8Array, input: Uint8Array): Uint8Array };

import { FLAG_KINDS, type FlagKind } from '../model/network-signal.ts';

/** ristretto255 elements and scalars are 32 bytes; a batch proof is two scalars. */
export const ELEMENT_BYTES = 32;
const PROOF_BYTES = 64;

export const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64url');

/** Strict base64url of an exact byte length (no padding, canonical), else undefined. */
export function fromB64(text: unknown, length?: number): Uint8Array | undefined {
  if (typeof text !== 'string' || !/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  if (bytes.toString('base64url') !== text) return undefined;
  if (length !== undefined && bytes.length !== length) return undefined;
  return new Uint8Array(bytes);
}

/** The PRF input of an identifier: versioned, and unambiguous (types and hashes hold no NUL). */
export function prfInput(idType: string, hash: string): Uint8Array {
  return new Uint8Array(Buffer.from(`vouch-network/v1\0${idType}\0${hash}`, 'utf8'));
}

/** Whether bytes are a canonical ristretto255 encoding of a group element other than the identity. */
function isElement(bytes: Uint8Array): boolean {
  try {
    return !ristretto255.Point.fromBytes(bytes).equals(ristretto255.Point.ZERO);
  } catch {
    return false;
  }
}

export interface OprfKeyPair {
  secretKey: Uint8Array;
  publicKey: Uint8Array;
}

export function generateOprfKey(): OprfKeyPair {
  return suite.generateKeyPair();
}

/** PRF_own(input): what this deployment publishes under, computed without any blinding. */
export function evaluateOwn(secretKey: Uint8Array, input: Uint8Array): Uint8Array {
  return direct.evaluate(secretKey, input);
}

/**
 * The answering side of an exchange: every element times the secret key, with one batch DLEQ
 * proof that the same key as `publicKey` was used. Throws on an element that is not a valid,
 * non-identity ristretto255 encoding.
 */
export function evaluateBlinded(
  keys: OprfKeyPair,
  elements: Uint8Array[],
): { evaluated: Uint8Array[]; proof: Uint8Array } {
  return suite.blindEvaluateBatch(keys.secretKey, keys.publicKey, elements);
}

/**
 * A peer's evaluate request as received (base64url elements): the index of the first element
 * that is not canonical base64url of a valid, non-identity ristretto255 encoding, or the answer
 * (base64url). Run in the worker thread (oprf-thread.ts).
 */
export function evaluateElements(
  keys: OprfKeyPair,
  encoded: string[],
): { evaluated: string[]; proof: string } | { bad: number } {
  const elements: Uint8Array[] = [];
  for (const [i, text] of encoded.entries()) {
    const bytes = fromB64(text, ELEMENT_BYTES);
    if (!bytes || !isElement(bytes)) return { bad: i };
    elements.push(bytes);
  }
  const answer = evaluateBlinded(keys, elements);
  return { evaluated: answer.evaluated.map(b64), proof: b64(answer.proof) };
}

/** The tag and label key (base64url) of each input under this deployment's own PRF: what it publishes under. */
export function ownEntries(secretKey: Uint8Array, inputs: Uint8Array[]): Array<{ tag: string; labelKey: string }> {
  return inputs.map((input) => {
    const output = evaluateOwn(secretKey, input);
    return { tag: deriveTag(output), labelKey: deriveLabelKey(output).toString('base64url') };
  });
}

export interface Blinded {
  input: Uint8Array;
  blind: Uint8Array;
  blinded: Uint8Array;
}

export function blindInputs(inputs: Uint8Array[]): Blinded[] {
  return inputs.map((input) => ({ input, ...suite.blind(input) }));
}

/**
 * The asking side: checks the peer's proof against its pinned OPRF key and unblinds. Undefined
 * when the answer is malformed or the proof fails (the peer used another key, or lied).
 */
export function finalizeAll(
  items: Blinded[],
  evaluated: Uint8Array[],
  publicKey: Uint8Array,
  proof: Uint8Array,
): Uint8Array[] | undefined {
  if (evaluated.length !== items.length || proof.length !== PROOF_BYTES) return undefined;
  try {
    return suite.finalizeBatch(
      items.map((item, i) => ({
        input: item.input,
        blind: item.blind,
        blinded: item.blinded,
        evaluated: evaluated[i]!,
      })),
      publicKey,
      proof,
    );
  } catch {
    return undefined;
  }
}

const derive = (prfOutput: Uint8Array, info: string) =>
  Buffer.from(hkdfSync('sha256', prfOutput, Buffer.alloc(0), info, 32));

/** The public name of an entry: reveals nothing of the PRF output it comes from. */
export const deriveTag = (prfOutput: Uint8Array): string =>
  derive(prfOutput, 'vouch-network/v1 tag').toString('base64url');

/** The key sealing the entry's label: only a holder of the same identifier can derive it. */
export const deriveLabelKey = (prfOutput: Uint8Array): Buffer => derive(prfOutput, 'vouch-network/v1 label');

export interface Label {
  /** how many of each kind, only kinds with a count above 0 */
  kinds: Partial<Record<FlagKind, number>>;
  /** the month of the latest flag, YYYY-MM */
  latest_month: string;
}

const labelAad = (tag: string) => Buffer.from(`vouch-network/v1 label ${tag}`, 'utf8');

/** AES-256-GCM under the label key, bound to its tag: iv ‖ ciphertext ‖ auth tag, base64url. */
export function sealLabel(label: Label, key: Buffer, tag: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(labelAad(tag));
  const body = Buffer.concat([cipher.update(JSON.stringify(label), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
}

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

/** The label, or undefined when the key is not the one it was sealed under or the content is malformed. */
export function openLabel(sealed: string, key: Buffer, tag: string): Label | undefined {
  const bytes = fromB64(sealed);
  if (!bytes || bytes.length < 12 + 16 + 2 || bytes.length > 4096) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
    decipher.setAAD(labelAad(tag));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    const text = Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString(
      'utf8',
    );
    return parseLabel(JSON.parse(text) as unknown);
  } catch {
    return undefined;
  }
}

/** A label from a peer is data: only known kinds with sane counts and a well-formed month pass. */
export function parseLabel(value: unknown): Label | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { kinds, latest_month: month } = value as { kinds?: unknown; latest_month?: unknown };
  if (typeof month !== 'string' || !MONTH.test(month) || typeof kinds !== 'object' || kinds === null) return undefined;
  const out: Partial<Record<FlagKind, number>> = {};
  for (const [kind, count] of Object.entries(kinds)) {
    if (
      !(FLAG_KINDS as readonly string[]).includes(kind) ||
      !Number.isSafeInteger(count) ||
      (count as number) < 1 ||
      (count as number) > 1e9
    )
      return undefined;
    out[kind as FlagKind] = count as number;
  }
  return Object.keys(out).length > 0 ? { kinds: out, latest_month: month } : undefined;
}
