// Network test support: a stand-in peer (its own Ed25519 key) that signs requests to an app under
// test the way a deployment does, and the blinded exchange as a peer runs it.
import { generateKeyPairSync } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import type { NetworkIdentity } from '../../src/network/identity.ts';
import { signRequest } from '../../src/network/peer-auth.ts';
import {
  b64,
  blindInputs,
  deriveLabelKey,
  deriveTag,
  finalizeAll,
  fromB64,
  generateOprfKey,
  openLabel,
  prfInput,
  type Label,
} from '../../src/network/oprf.ts';
import type { TestContext } from '../helpers/app.ts';

export function standInPeer(): NetworkIdentity {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const oprf = generateOprfKey();
  return {
    signingKey: String(publicKey.export({ format: 'jwk' }).x),
    privateKey,
    oprf,
    oprfPublicKey: b64(oprf.publicKey),
    createdAt: Date.now(),
  };
}

/** The signing key of the app under test: requests to it are signed for it. */
export async function recipientKey(ctx: TestContext): Promise<string> {
  const row = await ctx.store.db
    .withTables<{ network_identity: { id: string; signing_public: string } }>()
    .selectFrom('network_identity')
    .select('signing_public')
    .where('id', '=', 'self')
    .executeTakeFirstOrThrow();
  return row.signing_public;
}

/**
 * A request to /network/v1 signed by `peer` for the app under test, or for `recipient` (headers may be overridden to
 * forge one).
 */
export async function signedInject(
  ctx: TestContext,
  peer: NetworkIdentity,
  method: 'GET' | 'POST',
  url: string,
  payload?: unknown,
  override: Record<string, string> = {},
  recipient?: string,
): Promise<LightMyRequestResponse & { sent: Record<string, string> }> {
  const body = payload === undefined ? '' : JSON.stringify(payload);
  const headers = {
    ...signRequest(peer, recipient ?? (await recipientKey(ctx)), method, url, body),
    ...(body ? { 'content-type': 'application/json' } : {}),
    ...override,
  };
  return Object.assign(await ctx.inject({ method, url, headers, ...(body ? { payload: body } : {}) }), {
    sent: headers,
  });
}

/** The peer's side of the exchange against the app: blind, evaluate, verify, finalize; the tags and label keys. */
export async function resolveAt(
  ctx: TestContext,
  peer: NetworkIdentity,
  oprfPublicKey: string,
  ids: Array<{ type: string; hash: string }>,
) {
  const blinded = blindInputs(ids.map((id) => prfInput(id.type, id.hash)));
  const res = await signedInject(ctx, peer, 'POST', '/network/v1/evaluate', {
    elements: blinded.map((b) => b64(b.blinded)),
  });
  if (res.statusCode !== 200) throw new Error(`evaluate: ${res.statusCode} ${res.body}`);
  const answer = res.json() as { evaluated: string[]; proof: string };
  const outputs = finalizeAll(
    blinded,
    answer.evaluated.map((e) => fromB64(e, 32)!),
    fromB64(oprfPublicKey, 32)!,
    fromB64(answer.proof, 64)!,
  );
  if (!outputs) throw new Error('the proof does not verify');
  return outputs.map((out) => ({
    tag: deriveTag(out),
    open: (sealed: string): Label | undefined => openLabel(sealed, deriveLabelKey(out), deriveTag(out)),
  }));
}
