// Standard Webhooks signing (https://www.standardwebhooks.com): `whsec_` secrets, the three
// webhook-* headers, and the secret sealed at rest (a copy of the store alone cannot forge deliveries).
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { Kek, KeyEncryption } from '../auth/kek.ts';

/** 32 random bytes, base64, with the spec's `whsec_` prefix. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

const sealKey = (kek: Kek) => Buffer.from(hkdfSync('sha256', kek.key, 'vouch/webhook-secret/v1', 'webhook signing secrets', 32));
const aad = (webhookId: string) => Buffer.from(`vouch/webhook/${webhookId}`, 'utf8');

export function sealSecret(secret: string, webhookId: string, kek: Kek): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealKey(kek), iv);
  cipher.setAAD(aad(webhookId));
  const ct = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return JSON.stringify({ kek: kek.id, iv: iv.toString('base64url'), ct: ct.toString('base64url'), tag: cipher.getAuthTag().toString('base64url') });
}

/** The secret, or undefined when it was sealed under a key-encryption key this process lacks. */
export function unsealSecret(stored: string, webhookId: string, enc: KeyEncryption): string | undefined {
  try {
    const value = JSON.parse(stored) as { kek: string; iv: string; ct: string; tag: string };
    const kek = [enc.current, ...enc.previous].find((k) => k.id === value.kek);
    if (!kek) return undefined;
    const decipher = createDecipheriv('aes-256-gcm', sealKey(kek), Buffer.from(value.iv, 'base64url'));
    decipher.setAAD(aad(webhookId));
    decipher.setAuthTag(Buffer.from(value.tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(value.ct, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

/** The headers of one delivery attempt; every attempt of an event keeps its webhook-id. */
export function signedHeaders(secret: string, messageId: string, timestamp: Date, body: string): Record<string, string> {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(messageId, timestamp, body),
  };
}
