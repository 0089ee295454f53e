// Shared by the examples: a client from the environment, hashed identifiers, "run when executed".
//   VOUCH_URL (default http://127.0.0.1:8080, where `npm start` listens)
//   VOUCH_CLIENT_ID + VOUCH_CLIENT_SECRET (client credentials), or VOUCH_API_KEY
import { createHash } from 'node:crypto';
import { basename, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createVouchClient, type VouchClient } from '../sdk/src/index.ts';

export const DEFAULT_URL = 'http://127.0.0.1:8080';

/** What to do when no credential is set: the README's way to get one (see its "SDK and examples"). */
export const MISSING_CREDENTIALS = [
  'set VOUCH_CLIENT_ID and VOUCH_CLIENT_SECRET (or VOUCH_API_KEY). To get a client:',
  '  npx vouch clients create --name examples --role operator --scopes trust:read,trust:write,dispute:analyze,audit:read,labels:write,webhooks:read,webhooks:write',
  'and export the client_id and client_secret it prints as VOUCH_CLIENT_ID and VOUCH_CLIENT_SECRET.',
].join('\n');

export function clientFromEnv(env: NodeJS.ProcessEnv = process.env): VouchClient {
  const baseUrl = env.VOUCH_URL || DEFAULT_URL;
  if (env.VOUCH_CLIENT_ID && env.VOUCH_CLIENT_SECRET) {
    return createVouchClient({ baseUrl, clientId: env.VOUCH_CLIENT_ID, clientSecret: env.VOUCH_CLIENT_SECRET });
  }
  if (env.VOUCH_API_KEY) return createVouchClient({ baseUrl, apiKey: env.VOUCH_API_KEY });
  throw new Error(MISSING_CREDENTIALS);
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

/** One line (or the few of MISSING_CREDENTIALS) saying what failed and what to do about it. */
export function explain(err: unknown, env: NodeJS.ProcessEnv = process.env): string {
  const cause = (err as { cause?: { code?: unknown } } | undefined)?.cause;
  if (cause && (cause.code === 'ECONNREFUSED' || cause.code === 'ENOTFOUND')) {
    return `cannot reach ${env.VOUCH_URL || DEFAULT_URL} (${String(cause.code)}): start the server (npm start) or set VOUCH_URL`;
  }
  return err instanceof Error ? err.message : String(err);
}

/** Runs an example's main() when executed directly, printing its result as JSON. */
export function runIfMain(url: string, main: () => Promise<unknown>): void {
  if (!isMain(url)) return;
  main().then(
    (result) => console.log(JSON.stringify(result, null, 2)),
    (err: unknown) => {
      // A message, not a stack trace: what went wrong is the reader's next step, not our code.
      console.error(`${basename(process.argv[1] ?? 'example')}: ${explain(err)}`);
      process.exitCode = 1;
    },
  );
}
