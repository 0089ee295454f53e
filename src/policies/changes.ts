// Policy changes with their audit entries (docs/api.md, "Audit log") and four eyes on activations
// (docs/api.md, "Four eyes"): a new candidate is stored with its entry in one transaction, and an
// approved activation is applied in its approval's transaction, as its request would have been.
import type { Store } from '../store/db.ts';
import type { Principal } from '../lib/principal.ts';
import type { ChangeFeed } from '../store/change-feed.ts';
import { principalAuditor } from '../audit-log/auditor.ts';
import type { ChangeApplier } from '../changes/four-eyes.ts';
import { activatePolicy, insertPolicy, POLICY_FEED_KIND, type NewPolicy, type PolicyRow } from './repository.ts';

const ACTIONS = { upload: 'policy.uploaded', fit: 'policy.fitted', derived: 'policy.derived' } as const;

/** Stores a candidate (uploaded, fitted or derived) and its audit entry together. */
export function insertAudited(
  store: Store,
  principal: Principal,
  policy: NewPolicy & { source: keyof typeof ACTIONS },
): Promise<PolicyRow> {
  return store.db.transaction().execute(async (trx) => {
    const row = await insertPolicy(trx, principal.environment, { ...policy, createdBy: principal.id });
    await principalAuditor(store, principal)(trx, {
      action: ACTIONS[policy.source],
      target: `policy:${row.version}`,
      after: { status: row.status, source: row.source, parent_version: row.parent_version },
    });
    return row;
  });
}

/** How an approved policy activation is applied: the version activated (it must still exist), then announced. */
export function policyAppliers({ store, feed }: { store: Store; feed: ChangeFeed }): {
  policy_activation: ChangeApplier;
} {
  return {
    async policy_activation(trx, change, audit) {
      const { version } = change.payload as { version: string };
      const row = await activatePolicy(store, change.environment, version, audit, trx);
      return async () => {
        await feed.announce(POLICY_FEED_KIND, `${change.environment}:${row.version}`).catch(() => {});
      };
    },
  };
}
