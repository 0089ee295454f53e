// Resolving a review (docs/api.md, "Reviews"): the verdict, the label it gives the decision, the
// list entry it may add and the review.resolved webhook, all in one transaction, so a resolution
// never exists without its label or its event, nor they without it. The resolution itself is a
// conditional UPDATE (not resolved, and open, lapsed or the caller's own claim): of two reviewers
// resolving at once exactly one wins, the other gets 409.
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { ChangeFeed } from '../store/change-feed.ts';
import type { Environment } from '../lib/principal.ts';
import { Conflict, Forbidden, Invalid, NotFound } from '../lib/domain-errors.ts';
import { applyReviewLabel, checkLabelNote } from '../audit/labels.ts';
import { enqueueWebhookEvent } from '../webhooks/repository.ts';
import type { Auditor } from '../audit-log/auditor.ts';
import { CLAIM_LAPSE_MS, reviewRecord, type ReviewRecord } from './schemas.ts';
import { findReview } from './queue.ts';
import type { Viewer } from './repository.ts';
import { ListConflictError, ListNotFoundError, ListValueError, addListEntries } from '../rules/lists.ts';
import { listKind } from '../rules/list-repository.ts';
import { resolveRow } from './repository.ts';

export interface Resolution {
  resolution: 'approve' | 'decline';
  label?: 'fraud' | 'legit';
  note?: string;
  add_to_list?: string;
}

export interface ResolveDeps {
  db: Kysely<Database>;
  feed: ChangeFeed;
  /** whether the environment's active policy opens the list to reviewers (its `reviewLists`) */
  reviewListOpen: (environment: Environment, list: string) => boolean;
  /** the resolution's audit log entry goes through it, in the resolution's transaction */
  audit?: Auditor;
}

/**
 * add_to_list writes a list every score of the environment reads: it needs rules:write, or a list the
 * active policy opens to reviewers. The refusal does not say whether the list exists.
 */
function checkListWrite(deps: ResolveDeps, principal: Viewer['principal'], list: string): void {
  if (principal.scopes.has('rules:write') || deps.reviewListOpen(principal.environment, list)) return;
  throw new Forbidden(
    'add_to_list needs the rules:write scope, or a list the active policy opens to reviewers (reviewLists).',
    'insufficient_scope',
  );
}

/** What addListEntries refuses, said of the resolution's add_to_list field. */
function listError(err: unknown): never {
  if (err instanceof ListNotFoundError) throw listProblem('names no list of this environment');
  if (err instanceof ListValueError) throw listProblem(`cannot hold this entity: ${err.message}`);
  if (err instanceof ListConflictError) throw new Conflict(err.message);
  throw err;
}

const listProblem = (message: string) => new Invalid(`add_to_list ${message}.`, [{ field: 'add_to_list', message }]);

/**
 * The label a resolution gives: the one asked for, or fraud for a decline. An approve without a
 * label gives none now: the fit counts it legit once its trade completes cleanly within
 * assume_legit_after_days, like any unlabelled decision (docs/learning.md).
 */
export const resolutionLabel = (r: Resolution): 'fraud' | 'legit' | null =>
  r.label ?? (r.resolution === 'decline' ? 'fraud' : null);

export async function resolveReview(
  deps: ResolveDeps,
  viewer: Viewer,
  id: string,
  body: Resolution,
): Promise<ReviewRecord> {
  const { db, feed } = deps;
  const { principal, now } = viewer;
  checkLabelNote(body.note);
  if (body.add_to_list !== undefined) checkListWrite(deps, principal, body.add_to_list);
  const note = body.note ?? null;
  const label = resolutionLabel(body);
  const listName = body.add_to_list;

  await db.transaction().execute(async (trx) => {
    const changed = await resolveRow(trx, viewer, id, {
      resolution: body.resolution,
      label,
      note,
      addedToList: listName ?? null,
    });
    const row = await findReview(trx, viewer, id);
    if (!row) throw new NotFound('No such review.');
    if (changed === 0) {
      if (row.status === 'resolved') throw new Conflict('This review is already resolved.');
      throw new Conflict(
        `This review is claimed by ${row.assignee}; its claim lapses ${new Date(Number(row.claimed_at) + CLAIM_LAPSE_MS).toISOString()}.`,
      );
    }
    // An API or event label stays (src/audit/labels.ts): the review is resolved all the same.
    const labelled = label !== null && (await applyReviewLabel(trx, row.decision_id, label, note, principal.id, now));
    if (listName !== undefined) {
      const list = await listKind(trx, principal.environment, listName);
      if (!list) throw listProblem('names no list of this environment');
      if (list.kind !== 'entity')
        throw listProblem(`names a list of kind ${list.kind}; the entity can only be added to an entity list`);
      // It moves the rules revision and writes the feed row and list.changed in this transaction.
      await addListEntries(
        trx,
        principal.environment,
        listName,
        [row.entity_id],
        principal.id,
        { reason: `review ${id}`, feed },
        now,
      ).catch(listError);
    }
    // One entry for the resolution and what it did: the label it gave, the list it added the entity to.
    await deps.audit?.(trx, {
      action: 'review.resolved',
      target: `review:${id}`,
      after: {
        status: 'resolved',
        resolution: body.resolution,
        decision: row.decision_id,
        label: labelled ? label : null,
        added_to_list: listName ?? null,
      },
    });
    await enqueueWebhookEvent(
      trx,
      principal.environment,
      'review.resolved',
      reviewRecord(row, now) as unknown as Record<string, unknown>,
      { owner: row.owner_client_id, now },
    );
  });
  // After the commit, so no instance reloads the lists before the entry exists.
  if (listName !== undefined) await feed.announce('rules', principal.environment);
  const row = await findReview(db, viewer, id);
  return reviewRecord(row!, now);
}
