// Receive Vouch webhooks and verify their Standard Webhooks signature before trusting them.
// The secret (`whsec_…`) is returned once, when the webhook is created (POST /api/v1/webhooks).
//   VOUCH_WEBHOOK_SECRET=whsec_… PORT=8787 npx tsx examples/verify-webhook.ts
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { runIfMain } from './env.ts';

export interface WebhookEvent {
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/**
 * The verified event, or a thrown error (bad signature, stale timestamp, missing headers).
 * Verify the raw body exactly as received: re-serialized JSON would not match the signature.
 */
export function verifyWebhook(
  secret: string,
  headers: IncomingHttpHeaders | Record<string, string>,
  rawBody: string,
): WebhookEvent {
  const pick = (name: string) => {
    const v = (headers as Record<string, string | string[] | undefined>)[name];
    return Array.isArray(v) ? (v[0] ?? '') : (v ?? '');
  };
  const wh = new Webhook(secret);
  return wh.verify(rawBody, {
    'webhook-id': pick('webhook-id'),
    'webhook-timestamp': pick('webhook-timestamp'),
    'webhook-signature': pick('webhook-signature'),
  }) as WebhookEvent;
}

export interface Receiver {
  url: string;
  /** verified events, in arrival order */
  received: WebhookEvent[];
  /** deliveries refused (bad signature and the like) */
  rejected: number;
  close(): Promise<void>;
}

/**
 * A webhook receiver on 127.0.0.1: 204 for a verified delivery (each webhook-id handled once, as
 * retries keep it), 400 for anything that does not verify.
 */
export async function main(options: { secret?: string; port?: number } = {}): Promise<Receiver> {
  const secret = options.secret ?? process.env.VOUCH_WEBHOOK_SECRET;
  if (!secret) throw new Error('set VOUCH_WEBHOOK_SECRET (whsec_…)');
  const seen = new Set<string>();
  const receiver: Omit<Receiver, 'url' | 'close'> = { received: [], rejected: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let event: WebhookEvent;
      try {
        event = verifyWebhook(secret, req.headers, body);
      } catch {
        receiver.rejected += 1;
        res.writeHead(400).end();
        return;
      }
      const id = String(req.headers['webhook-id']);
      if (!seen.has(id)) {
        seen.add(id);
        receiver.received.push(event);
        console.log(`webhook ${id}: ${event.type}`);
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((ok) => server.listen(options.port ?? Number(process.env.PORT ?? 0), '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}/vouch-webhooks`,
    close: () => new Promise<void>((ok, fail) => server.close((err) => (err ? fail(err) : ok()))),
  });
}

runIfMain(import.meta.url, async () => {
  const r = await main();
  return { listening: r.url };
});
