// Rotating an API key (docs/api.md, "API keys"): a successor with the same grants, while the old
// key lives on through a grace period so that its holder can switch without an outage.
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { ChangeFeed } from '../store/change-feed.ts';
import { parseScopes, type Role } from '../lib/principal.ts';
import type { ApiKeyEnv } from './format.ts';
import { claimKeyRotation, findKey, insertKey, setKeyExpiry, type KeyRow, type Refusal } from './repository.ts';
import type { Auditor } from '../audit-log/auditor.ts';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** Thrown inside a transaction to roll back its first (claiming) write. */
class Refused extends Error {
  constructor(readonly detail: string) {
    super(detail);
  }
}

export type RotateOutcome =
  | { kind: 'not_found' }
  | { kind: 'forbidden'; detail: string }
  | { kind: 'conflict' }
  | { kind: 'rotated'; row: KeyRow; key: string; old: KeyRow };

/**
 * A new key with the old one's name, scopes, role, environment and expires_at; the old one
 * expires after the grace period. A key has at most one successor: the rotation first claims
 * the key with a conditional write (rotated_at is null), so of concurrent rotations, in this
 * process or any other, on either backend, exactly one succeeds and the rest find it taken.
 * The write comes first so SQLite takes its write lock before reading (a read-then-write
 * transaction would fail with SQLITE_BUSY when another process commits in between).
 */
export async function rotateKey(
  db: Kysely<Database>,
  feed: ChangeFeed,
  id: string,
  owner: string | undefined,
  graceSeconds: number,
  refuse: Refusal = () => undefined,
  audit?: Auditor,
  /** the principal rotating it: the successor's creator */
  by: string | null = null,
): Promise<RotateOutcome> {
  const now = Date.now();
  let outcome: RotateOutcome;
  try {
    outcome = await db.transaction().execute(async (trx): Promise<RotateOutcome> => {
      const claimed = await claimKeyRotation(trx, id, owner, now);
      const old = await findKey(trx, id, owner);
      if (!old) return { kind: 'not_found' };
      const refusal = refuse(old);
      if (refusal !== undefined) {
        if (claimed) throw new Refused(refusal);
        return { kind: 'forbidden', detail: refusal };
      }
      if (!claimed) return { kind: 'conflict' };
      const expiresAt = now + graceSeconds * 1000;
      const newExpiry = old.expires_at !== null && old.expires_at < expiresAt ? old.expires_at : expiresAt;
      await setKeyExpiry(trx, id, newExpiry);
      await feed.record(trx, 'key', id);
      const { row, key } = await insertKey(
        trx,
        {
          ownerClientId: old.owner_client_id,
          name: old.name,
          scopes: parseScopes(old.scopes),
          role: old.role as Role,
          environment: old.environment as ApiKeyEnv,
          // The successor has the same expires_at (a rotation never extends a key's life).
          expiresAt: old.expires_at,
          createdBy: by,
        },
        { rotation: true },
      );
      await audit?.(trx, {
        action: 'key.rotated',
        target: `key:${id}`,
        before: { expires_at: iso(old.expires_at) },
        after: { expires_at: iso(newExpiry), successor: row.id, grace_period_seconds: graceSeconds },
      });
      return { kind: 'rotated', row, key, old: { ...old, expires_at: newExpiry } };
    });
  } catch (err) {
    if (err instanceof Refused) return { kind: 'forbidden', detail: err.detail };
    throw err;
  }
  if (outcome.kind === 'rotated') await feed.announce('key', id);
  return outcome;
}
