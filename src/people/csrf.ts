// A console page reloaded has its session cookie but not the CSRF token it was given at sign-in;
// GET /api/v1/auth/session hands it a new one (docs/api.md, "People"). Only a page that can read
// the response can use it, and a cross-site page cannot (no CORS for it, and the cookie is
// SameSite=Strict), so rotating it on a GET gives an attacker nothing.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import { sha256Hex } from '../lib/digest.ts';
import { setSessionCsrf } from './repository.ts';

export async function rotateCsrf(db: Kysely<Database>, sessionToken: string): Promise<string> {
  const csrf = randomBytes(32).toString('base64url');
  await setSessionCsrf(db, sha256Hex(sessionToken), sha256Hex(csrf));
  return csrf;
}
