// Shared by the examples: a client from the environment, hashed identifiers, "run when executed".
//   VOUCH_URL (default http://127.0.0.1:3000)
//   VOUCH_CLIENT_ID + VOUCH_CLIENT_SECRET (client credentials), or VOUCH_API_KEY
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createVouchClient, type VouchClient } from '../sdk/src/index.ts';

export function clientFromEnv(env: NodeJS.ProcessEnv = process.env): VouchClient {
  const baseUrl = env.VOUCH_URL ?? 'http://127.0.0.1:3000';
  if (env.VOUCH_CLIENT_ID && env.VOUCH_CLIENT_SECRET) {
    return createVouchClient({ baseUrl, clientId: env.VOUCH_CLIENT_ID, clientSecret: env.VOUCH_CLIENT_SECRET });
  }
  if (env.VOUCH_API_KEY) return createVouchClient({ baseUrl, apiKey: env.VOUCH_API_KEY });
  throw new Error('set VOUCH_CLIENT_ID and VOUCH_CLIENT_SECRET, or VOUCH_API_KEY');
}

/**
 * The API refuses raw identifiers (phone numbers, e-mails, IBANs, card numbers): send a digest.
 * In production use a keyed hash (HMAC with a secret of yours) so the digest cannot be reversed
 * by guessing; a plain SHA-256 keeps the examples short.
 */
export function hashId(raw: string): string {
  return createHash('sha256').update(raw).digest('hex');
}

/** True when the module at `url` is the script node was started with. */
export function isMain(url: string): boolean {
  return process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(url);
}

/** Runs an example's main() when executed directly, printing its result as JSON. */
export function runIfMain(url: string, main: () => Promise<unknown>): void {
  if (!isMain(url)) return;
  main().then(
    (result) => console.log(JSON.stringify(result, null, 2)),
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
