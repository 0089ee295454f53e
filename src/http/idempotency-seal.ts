// A stored response, sealed (docs/api.md, "Integration"): it can hold a secret (a new API key), so
// it is sealed under the key-encryption key and bound to the row of its claim.
import { open, seal, type KeyEncryption, type Purpose, type SealingKey as Kek } from '../lib/envelope.ts';
import type { Environment } from '../lib/principal.ts';

/** The row of a claim: the key sent by one principal of one client, in one environment. */
export interface ClaimId {
  environment: Environment;
  clientId: string;
  principalId: string;
  key: string;
}

interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const STORED_RESPONSES: Purpose = { subkey: { salt: 'vouch/idempotency/v1', info: 'stored responses' } };
/** Binds a sealed response to its row (environment, client, principal, key), so it cannot be moved to another. */
const aad = (id: ClaimId) => `vouch/idempotency/v2/${id.environment}/${id.clientId}/${id.principalId}\0${id.key}`;

export function sealResponse(value: StoredResponse, claim: ClaimId, kek: Kek): string {
  return seal(JSON.stringify(value), aad(claim), kek, STORED_RESPONSES);
}

export function openResponse(stored: string, claim: ClaimId, enc: KeyEncryption): StoredResponse | undefined {
  const opened = open(stored, aad(claim), [enc.current, ...enc.previous], STORED_RESPONSES);
  if (!opened.ok) return undefined;
  try {
    return JSON.parse(opened.plaintext) as StoredResponse;
  } catch {
    return undefined;
  }
}
