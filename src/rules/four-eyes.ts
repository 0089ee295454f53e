// Four eyes on rules and lists (docs/api.md, "Four eyes"): what makes a rule change or a list
// deletion wait for a second person, and how it is applied once approved. A change that leaves a
// rule active with something new (activating it, or editing it while active) waits, since either
// changes what every score decides; moving a rule out of active does not, nor does anything else.
import type { Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Store } from '../store/db.ts';
import type { Principal } from '../lib/principal.ts';
import type { ChangeFeed } from '../store/change-feed.ts';
import { deferIfFourEyes, type ChangeApplier } from '../changes/four-eyes.ts';
import type { ChangeView } from '../changes/schemas.ts';
import { getRule, rulesNamingList, updateRule } from './repository.ts';
import { patchedBody, type RulePatch } from './rule-body.ts';
import { listKinds } from './list-repository.ts';
import { deleteList, ListConflictError, ListNotFoundError } from './lists.ts';
import { getList } from './list-repository.ts';
import { RULES_FEED_KIND } from './revisions.ts';
import { checkOrThrow } from './route-support.ts';

/** What an approval applies: the PATCH as it was sent, on the version it was sent for. */
interface RuleActivationPayload {
  patch: RulePatch;
  reason: string | null;
  base_version: number;
}

/**
 * The pending change when this PATCH would leave the rule active with something new and four
 * eyes holds rules; else undefined, and the PATCH applies as usual (which also answers a missing
 * or retired rule). The new body is checked now, so what waits is what could be applied.
 */
export async function deferRuleChange(
  store: Store,
  principal: Principal,
  id: string,
  patch: RulePatch,
  reason: string | null,
): Promise<ChangeView | undefined> {
  const current = await getRule(store.db, principal.environment, id);
  if (!current || current.status === 'retired') return undefined;
  const { status, ...fields } = patch;
  const body = patchedBody(current, fields);
  const active = (status ?? current.status) === 'active';
  if (!active || (current.status === 'active' && JSON.stringify(body) === current.body)) return undefined;
  const payload: RuleActivationPayload = { patch, reason, base_version: current.version };
  return deferIfFourEyes(store, principal, {
    kind: 'rule_activation',
    target: `rule:${id}`,
    payload: { ...payload },
    logged: { fields: Object.keys(patch), base_version: current.version },
    check: async () => checkOrThrow(body, await listKinds(store.db, principal.environment)),
  });
}

/**
 * The pending change when four eyes holds lists; else undefined (delete now). The list must
 * exist and no active or shadow rule may name it, as for a deletion now.
 */
export async function deferListDeletion(
  store: Store,
  principal: Principal,
  name: string,
): Promise<ChangeView | undefined> {
  return deferIfFourEyes(store, principal, {
    kind: 'list_deletion',
    target: `list:${name}`,
    payload: { name },
    check: async () => {
      if (!(await getList(store.db, principal.environment, name))) throw new ListNotFoundError(`no list ${name}`);
      const naming = await rulesNamingList(store.db, principal.environment, name);
      if (naming.length > 0)
        throw new ListConflictError(`list ${name} is named by ${naming.length} active or shadow rule(s)`, naming);
    },
  });
}

/** How an approved rule activation or list deletion is applied: as its request, by its requester, checked again. */
export function ruleAppliers({ feed }: { feed: ChangeFeed }): {
  rule_activation: ChangeApplier;
  list_deletion: ChangeApplier;
} {
  const announced = (environment: string) => async () => {
    await feed.announce(RULES_FEED_KIND, environment).catch(() => {});
  };
  return {
    async rule_activation(trx: Transaction<Database>, change, audit) {
      const { patch, reason, base_version } = change.payload as RuleActivationPayload;
      const c = {
        environment: change.environment,
        by: change.requestedBy.id,
        now: Date.now(),
        reason,
        audit,
        expectVersion: base_version,
      };
      await updateRule(trx, feed, c, change.target.slice('rule:'.length), patch, checkOrThrow);
      return announced(change.environment);
    },
    async list_deletion(trx: Transaction<Database>, change, audit) {
      const { name } = change.payload as { name: string };
      const c = { environment: change.environment, by: change.requestedBy.id, now: Date.now(), audit };
      await deleteList(trx, feed, c, name);
      return announced(change.environment);
    },
  };
}
