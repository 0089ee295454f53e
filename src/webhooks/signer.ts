// Standard Webhooks signing (https://www.standardwebhooks.com): `whsec_` secrets, the three
// webhook-* headers, and the secret sealed at rest (a copy of the store alone cannot forge deliveries).
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { Kek } from '../auth/kek.ts';
import type { KeyEncryption } from '../lib/envelope.ts';
import { open, seal, type Purpose } from '../lib/envelope.ts';

/** 32 random bytes, base64, with the spec's `whsec_` prefix. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

// Unmarked, under a subkey of its own: the format webhook secrets have always been stored in.
const WEBHOOK_SECRETS: Purpose = { subkey: { salt: 'vouch/webhook-secret/v1', info: 'webhook signing secrets' } };
const aad = (webhookId: string) => `vouch/webhook/${webhookId}`;

export function sealSecret(secret: string, webhookId: string, kek: Kek): string {
  return seal(secret, aad(webhookId), kek, WEBHOOK_SECRETS);
}

/** The secret, or undefined when it was sealed under a key-encryption key this process lacks. */
export function unsealSecret(stored: string, webhookId: string, enc: KeyEncryption): string | undefined {
  const opened = open(stored, aad(webhookId), [enc.current, ...enc.previous], WEBHOOK_SECRETS);
  return opened.ok ? opened.plaintext : undefined;
}

/** The headers of one delivery attempt; every attempt of an event keeps its webhook-id. */
export function signedHeaders(
  secret: string,
  messageId: string,
  timestamp: Date,
  body: string,
): Record<string, string> {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(messageId, timestamp, body),
  };
}
