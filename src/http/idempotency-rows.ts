// The rewrite of stored responses an erasure needs (docs/api.md, "Idempotency"): opened, rewritten
// and sealed again. The rows themselves are read and written by idempotency-repository.ts.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { KeyEncryption } from '../lib/envelope.ts';
import type { Environment } from '../lib/principal.ts';
import { openResponse, sealResponse, type ClaimId } from './idempotency-seal.ts';
import { replaceClaimResponse, storedResponsePage, type StoredResponseCursor } from './idempotency-repository.ts';

const REWRITE_PAGE = 500;

/**
 * Rewrites the stored responses of an environment whose body `rewrite` changes (erasure: no stored
 * text keeps an erased id). The responses are sealed, so each is opened, rewritten and sealed again
 * under the current key; the scan covers the last 24 h of responses, in pages.
 */
export async function rewriteStoredResponses(
  db: Kysely<Database> | Transaction<Database>,
  encryption: KeyEncryption,
  environment: Environment,
  rewrite: (body: string) => string,
): Promise<number> {
  let changed = 0;
  let after: StoredResponseCursor | undefined;
  for (;;) {
    const rows = await storedResponsePage(db, environment, after, REWRITE_PAGE);
    for (const row of rows) {
      const id: ClaimId = { environment, clientId: row.client_id, principalId: row.principal_id, key: row.idem_key };
      const stored = row.response === null ? undefined : openResponse(row.response, id, encryption);
      if (!stored) continue;
      const body = rewrite(stored.body);
      if (body === stored.body) continue;
      await replaceClaimResponse(db, id, sealResponse({ ...stored, body }, id, encryption.current));
      changed++;
    }
    if (rows.length < REWRITE_PAGE) return changed;
    after = rows[rows.length - 1]!;
  }
}
