// The idempotency_keys rows (docs/api.md, "Idempotency"): one claim's row as a where-clause, and
// the rewrite of stored responses an erasure needs (opened, rewritten and sealed again).
import type { ExpressionBuilder, Kysely, Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { KeyEncryption } from '../lib/envelope.ts';
import type { Environment } from '../lib/principal.ts';
import { openResponse, sealResponse, type ClaimId } from './idempotency-seal.ts';

const REWRITE_PAGE = 500;

/** The row of one claim, as a where-clause (the table's primary key). */
export function rowOf(id: ClaimId) {
  return [
    (eb: ExpressionBuilder<Database, 'idempotency_keys'>) =>
      eb.and([
        eb('environment', '=', id.environment),
        eb('client_id', '=', id.clientId),
        eb('principal_id', '=', id.principalId),
        eb('idem_key', '=', id.key),
      ]),
  ] as const;
}

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
  let after: { client_id: string; principal_id: string; idem_key: string } | undefined;
  for (;;) {
    let q = db
      .selectFrom('idempotency_keys')
      .select(['client_id', 'principal_id', 'idem_key', 'response'])
      .where('environment', '=', environment)
      .where('state', '=', 'done')
      .orderBy('client_id')
      .orderBy('principal_id')
      .orderBy('idem_key')
      .limit(REWRITE_PAGE);
    if (after) {
      const a = after;
      q = q.where((eb) =>
        eb.or([
          eb('client_id', '>', a.client_id),
          eb.and([eb('client_id', '=', a.client_id), eb('principal_id', '>', a.principal_id)]),
          eb.and([
            eb('client_id', '=', a.client_id),
            eb('principal_id', '=', a.principal_id),
            eb('idem_key', '>', a.idem_key),
          ]),
        ]),
      );
    }
    const rows = await q.execute();
    for (const row of rows) {
      const id: ClaimId = { environment, clientId: row.client_id, principalId: row.principal_id, key: row.idem_key };
      const stored = row.response === null ? undefined : openResponse(row.response, id, encryption);
      if (!stored) continue;
      const body = rewrite(stored.body);
      if (body === stored.body) continue;
      await db
        .updateTable('idempotency_keys')
        .set({ response: sealResponse({ ...stored, body }, id, encryption.current) })
        .where(...rowOf(id))
        .execute();
      changed++;
    }
    if (rows.length < REWRITE_PAGE) return changed;
    after = rows[rows.length - 1]!;
  }
}
