// Four eyes (docs/api.md, "Four eyes"): with the setting on for an area, a change of that area is
// stored as pending instead of applied, whoever asks (a machine too: an API key must not be a way
// around it), and applied only when another person approves it. The feature routes call
// `deferIfFourEyes` before they apply; the approval calls the feature back through its applier,
// in the approval's own transaction, so a change is approved exactly when it is applied.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Store } from '../store/db.ts';
import type { Environment, Principal, Scope } from '../lib/principal.ts';
import { newId } from '../lib/ids.ts';
import { auditorFor, namedActor, principalAuditor, type Auditor } from '../audit-log/auditor.ts';
import {
  changeView,
  decidePending,
  fourEyesAreas,
  getChange,
  insertChange,
  markExpired,
  pendingChange,
  statusOf,
  storeFourEyesAreas,
  type PendingChange,
} from './repository.ts';
import {
  AREA_OF,
  FOUR_EYES_AREAS,
  PENDING_TTL_MS,
  type ChangeKind,
  type ChangeView,
  type FourEyesArea,
} from './schemas.ts';

/**
 * Applies an approved change as its request would have been applied, checked again now (the rule
 * still exists, the list is still unused), inside the approval's transaction; entries go to the
 * audit log through `audit` (the requester's). Returns what to do once it commits (announce on the feed).
 */
export type ChangeApplier = (
  trx: Transaction<Database>,
  change: PendingChange,
  audit: Auditor,
) => Promise<() => Promise<void>>;
export type ChangeAppliers = Record<ChangeKind, ChangeApplier>;

/** Replaces the environment's setting; the audit log gets the change, when there is one. */
export async function setFourEyes(
  store: Store,
  principal: Principal,
  areas: readonly FourEyesArea[],
): Promise<FourEyesArea[]> {
  return store.db.transaction().execute(async (trx) => {
    const before = await fourEyesAreas(trx, principal.environment);
    const wanted = FOUR_EYES_AREAS.filter((a) => areas.includes(a));
    // Who changed it is kept with it (docs/api.md, "Four eyes"), as the audit log keeps the change.
    const changed = before.join() !== wanted.join() ? { by: principal.id, at: Date.now() } : undefined;
    await storeFourEyesAreas(trx, principal.environment, wanted, changed);
    const after = await fourEyesAreas(trx, principal.environment);
    if (before.join() !== after.join())
      await principalAuditor(store, principal)(trx, {
        action: 'settings.changed',
        target: 'settings:four_eyes',
        before: { four_eyes: before },
        after: { four_eyes: after },
      });
    return after;
  });
}

export interface ChangeRequest {
  kind: ChangeKind;
  target: string;
  /** what the applier needs to apply it later: the request's own fields (no secrets) */
  payload: Record<string, unknown>;
  /** what the audit log keeps of the payload (else the payload): free text left out */
  logged?: Record<string, unknown>;
  /** the request's own checks, run only when it is held (applying it now checks them anyway) */
  check?: () => Promise<void>;
}

/** Whether four eyes holds changes of this kind in the environment. */
export async function fourEyesHolds(
  db: Kysely<Database>,
  environment: Environment,
  kind: ChangeKind,
): Promise<boolean> {
  return (await fourEyesAreas(db, environment)).includes(AREA_OF[kind]);
}

/** The pending change when four eyes holds this kind in the principal's environment; else undefined (apply now). */
export async function deferIfFourEyes(
  store: Store,
  principal: Principal,
  request: ChangeRequest,
  now = Date.now(),
): Promise<ChangeView | undefined> {
  if (!(await fourEyesHolds(store.db, principal.environment, request.kind))) return undefined;
  await request.check?.();
  const actor = await namedActor(store.db, principal);
  return store.db.transaction().execute(async (trx) => {
    const row = {
      id: newId('chg'),
      environment: principal.environment,
      kind: request.kind,
      target: request.target,
      payload: JSON.stringify(request.payload),
      requested_by: JSON.stringify(actor),
      requested_by_id: actor.id,
      status: 'pending',
      created_at: now,
      expires_at: now + PENDING_TTL_MS,
      decided_by: null,
      decided_at: null,
      note: null,
    };
    await insertChange(trx, row);
    const logRequest = auditorFor(store, principal.environment, actor);
    await logRequest(trx, {
      action: 'change.requested',
      target: `change:${row.id}`,
      after: { kind: request.kind, target: request.target, ...(request.logged ?? request.payload) },
    });
    return changeView(row, now);
  });
}

export type DecideOutcome =
  | { kind: 'not_found' }
  | { kind: 'forbidden'; detail: string }
  | { kind: 'insufficient_scope'; scope: Scope }
  | { kind: 'conflict'; detail: string }
  | { kind: 'decided'; change: ChangeView; afterCommit: () => Promise<void> };

export interface Decision {
  approve: boolean;
  note: string | null;
  /** the scope this principal lacks to decide this change (one its route needs), or undefined */
  lacks: (change: PendingChange) => Scope | undefined;
}

/**
 * Approves (and applies) or rejects a pending change. Approving needs a person other than the one
 * who asked: a machine, or the requester, is refused (a requester may still reject, withdrawing
 * their own). Of two deciders at once exactly one wins (a conditional update); the other finds
 * it decided (conflict), as does anyone after its expiry.
 */
export async function decideChange(
  store: Store,
  principal: Principal,
  id: string,
  decision: Decision,
  appliers: ChangeAppliers,
  now = Date.now(),
): Promise<DecideOutcome> {
  const found = await getChange(store.db, principal.environment, id);
  if (!found) return { kind: 'not_found' };
  const change = pendingChange(found);
  const lacking = decision.lacks(change);
  if (lacking !== undefined) return { kind: 'insufficient_scope', scope: lacking };
  const undecidable = async (): Promise<DecideOutcome> => {
    const row = (await getChange(store.db, principal.environment, id))!;
    const status = statusOf(row, now);
    if (status === 'expired') await markExpired(store.db, id, now);
    return { kind: 'conflict', detail: `This change is ${status}; only a pending change can be decided.` };
  };
  if (statusOf(found, now) !== 'pending') return undecidable();
  if (decision.approve && principal.kind !== 'user')
    return { kind: 'forbidden', detail: 'Only a person can approve a change; a client or an API key cannot.' };
  if (decision.approve && principal.id === found.requested_by_id)
    return { kind: 'forbidden', detail: 'Another person must approve this change: you asked for it.' };

  const decider = await namedActor(store.db, principal);
  const outcome = await store.db.transaction().execute(async (trx) => {
    // The decision is the transaction's first write: of two deciders, the second waits here and
    // then finds it decided.
    const status = decision.approve ? 'approved' : 'rejected';
    const decided = await decidePending(
      trx,
      id,
      { status, decidedBy: JSON.stringify(decider), note: decision.note },
      now,
    );
    if (!decided) return undefined;
    // Applied before the decision's own entry: the audit log's lock is the last a transaction
    // takes (the applier takes its feature's locks first, as the same change made directly does).
    const afterCommit = decision.approve
      ? await appliers[change.kind](trx, change, auditorFor(store, change.environment, change.requestedBy))
      : async () => {};
    const logDecision = auditorFor(store, change.environment, decider);
    await logDecision(trx, {
      action: `change.${status}`,
      target: `change:${id}`,
      before: { status: 'pending' },
      after: { status, kind: change.kind, target: change.target, ...(decision.note ? { note: decision.note } : {}) },
    });
    const row = (await getChange(trx, principal.environment, id))!;
    return { kind: 'decided' as const, change: changeView(row, now), afterCommit };
  });
  return outcome ?? undecidable();
}
