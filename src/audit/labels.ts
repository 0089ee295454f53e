// Outcome labels of score decisions (docs/api.md, "Outcomes and labels"): from the API (an operator's word, final until
// relabelled), from history (a chargeback, fraud report or lost dispute naming the trade) and from
// the review queue (a reviewer's verdict, docs/api.md "Reviews"). Precedence: api > event > review.
// An event label never overwrites an API label; a review label overwrites neither (a chargeback on
// the trade is what happened, a reviewer's verdict was a judgement made before it), and an event
// label replaces a review label.
import { Type } from 'typebox';
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database, DecisionsTable } from '../store/schema.ts';
import type { Environment, Principal } from '../lib/principal.ts';
import { ownerFilter } from '../http/route.ts';
import { StringEnum } from '../http/validation.ts';
import { Conflict, Invalid, NotFound, rawIdentifierMessage, rawIdentifierRejected } from '../lib/domain-errors.ts';
import { rawIdentifierInText } from '../lib/identifiers.ts';
import type { Auditor } from '../audit-log/auditor.ts';
import { actorIn, resolveActors, type Actors } from '../audit-log/actors.ts';
import { nullableActor } from '../audit-log/schemas.ts';
import type { Actor } from '../lib/principal.ts';
import { setApiLabel, setEventFraudLabel, setReviewLabel, visibleDecision } from './decision-repository.ts';

/** What labelling one decision takes: POST /api/v1/decisions/{id}/label's body (OpenAPI: labelDecision). */
export const LabelBody = Type.Object(
  {
    label: StringEnum(['fraud', 'legit'] as const),
    note: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);

export const LabelSchema = Type.Object({
  decision_id: Type.String(),
  label: Type.Union([Type.Literal('fraud'), Type.Literal('legit')]),
  source: Type.Union([Type.Literal('api'), Type.Literal('event'), Type.Literal('review')], {
    description:
      'api: POST .../label; event: a chargeback, fraud report or lost dispute on the trade; review: a reviewer\'s resolution (docs/api.md, "Reviews")',
  }),
  labelled_at: Type.String({ format: 'date-time' }),
  labelled_by: Type.Union([Type.String(), Type.Null()], {
    description: 'the principal (api, review: the reviewer) or the client that sent the event (event)',
  }),
  labelled_by_actor: nullableActor('`labelled_by` named as it is now: `{type, id, name}`; null when labelled_by is'),
  note: Type.Optional(Type.String()),
});

type LabelSource = 'api' | 'event' | 'review';

export interface LabelRecord {
  decision_id: string;
  label: 'fraud' | 'legit';
  source: LabelSource;
  labelled_at: string;
  labelled_by: string | null;
  labelled_by_actor: Actor | null;
  note?: string;
}

type LabelColumns = Pick<
  DecisionsTable,
  'id' | 'label' | 'label_source' | 'label_note' | 'labelled_at' | 'labelled_by'
>;

/** The ids a page of labels names, for one resolveActors call (docs/api.md, "Audit log", "Who"). */
export const labelActorIds = (rows: readonly Pick<LabelColumns, 'labelled_by'>[]) => rows.map((r) => r.labelled_by);

/** The decision's label, its `labelled_by` named out of `actors` (resolveActors over the page's labelActorIds). */
export function labelObject(row: LabelColumns, actors: Actors): LabelRecord | null {
  if (row.label !== 'fraud' && row.label !== 'legit') return null;
  return {
    decision_id: row.id,
    label: row.label,
    source: row.label_source === 'event' || row.label_source === 'review' ? row.label_source : 'api',
    labelled_at: new Date(Number(row.labelled_at ?? 0)).toISOString(),
    labelled_by: row.labelled_by ?? null,
    labelled_by_actor: actorIn(actors, row.labelled_by),
    ...(row.label_note ? { note: row.label_note } : {}),
  };
}

/**
 * A label's note is free text that operators read (docs/api.md, "Raw identifiers"): a raw phone,
 * e-mail, IBAN or card in it is refused as in an id, and so are control characters, which would
 * reach their terminals (and PostgreSQL cannot store NUL).
 */
export function checkLabelNote(note: string | undefined): void {
  if (note === undefined) return;
  const kind = rawIdentifierInText(note);
  if (kind) throw rawIdentifierRejected([{ field: 'note', message: rawIdentifierMessage(kind) }]);
  if (/\p{Cc}/u.test(note)) {
    throw new Invalid('note must not contain control characters.', [
      { field: 'note', message: 'must not contain control characters' },
    ]);
  }
}

/**
 * The decision `id` as `principal` may see it: of its environment (test mode), and of its own
 * client unless it is an admin. Anything else does not exist for it: "not found", never "forbidden".
 */
export function findDecision(
  db: Kysely<Database>,
  id: string,
  principal: Principal,
): Promise<Selectable<DecisionsTable> | undefined> {
  // Another environment's decision does not exist for the caller (test mode), admins included.
  return visibleDecision(db, id, principal.environment, ownerFilter(principal));
}

/**
 * An operator's label on one score decision, as POST /api/v1/decisions/{id}/label answers it: the
 * label record, or a domain error (404 unknown or not the caller's; 409 a dispute analysis). The bulk
 * route (bulk-labels.ts) calls it per item, so the two never disagree.
 */
export async function labelDecision(
  db: Kysely<Database>,
  principal: Principal,
  id: string,
  label: 'fraud' | 'legit',
  note: string | null,
  /** the label's audit log entry goes through it, in `db` (a transaction, for the two to commit together) */
  audit?: Auditor,
  /** the principal's actor, resolved once by a caller that labels many (bulk-labels.ts) */
  actors?: Actors,
): Promise<LabelRecord> {
  checkLabelNote(note ?? undefined);
  const row = await findDecision(db, id, principal);
  if (!row) throw new NotFound('No such decision.');
  if (row.kind !== 'score') {
    throw new Conflict('A dispute analysis cannot be labelled; its outcome arrives as a dispute.resolved event.');
  }
  const named = actors ?? (await resolveActors(db, [principal.id]));
  const record = await applyApiLabel(db, row.id, label, note, principal.id, named);
  await audit?.(db, {
    action: 'decision.labelled',
    target: `decision:${row.id}`,
    before: { label: row.label, source: row.label === null ? null : (row.label_source ?? 'api') },
    after: { label, source: 'api' },
  });
  return record;
}

async function applyApiLabel(
  db: Kysely<Database>,
  id: string,
  label: 'fraud' | 'legit',
  note: string | null,
  by: string,
  actors: Actors,
): Promise<LabelRecord> {
  const now = Date.now();
  await setApiLabel(db, id, label, note, by, now);
  return labelObject({ id, label, label_source: 'api', label_note: note, labelled_at: now, labelled_by: by }, actors)!;
}

/** Event types that, carrying a trade_id, say the entity defrauded that trade. */
const FRAUD_OUTCOMES = new Set(['chargeback', 'fraud.reported']);

interface OutcomeEvent {
  type: string;
  entity_id: string;
  trade_id?: string;
  resolution?: string;
}

function isFraudOutcome(ev: OutcomeEvent): boolean {
  if (typeof ev.trade_id !== 'string' || ev.trade_id === '') return false;
  return FRAUD_OUTCOMES.has(ev.type) || (ev.type === 'dispute.resolved' && ev.resolution === 'against');
}

/**
 * Labels `fraud` (source event) every score decision of each event's entity and trade, inside the
 * ingest's transaction, so a label exists exactly when its event does. API labels are left alone.
 * Only decisions of the events' environment: a test outcome never labels a live decision. Only
 * decisions of the client that sent the events (docs/api.md, "Outcomes and labels"): trade ids are
 * each marketplace's own, so another client's outcome for "the same" trade says nothing about ours,
 * and a client must not be able to write labels into another's decisions. Events imported by the
 * host's operator (`vouch events import`, client '') label every client's decisions, as before.
 * Returns how many decisions were labelled.
 */
export async function labelFromEvents(
  trx: Transaction<Database> | Kysely<Database>,
  environment: Environment,
  events: readonly OutcomeEvent[],
  clientId: string,
  now: number,
): Promise<number> {
  const seen = new Set<string>();
  let labelled = 0;
  for (const ev of events) {
    if (!isFraudOutcome(ev)) continue;
    const key = `${ev.entity_id}\0${ev.trade_id}`;
    if (seen.has(key)) continue;
    seen.add(key);
    // api labels stay; event and review labels give way to this one (see the head of this file)
    const result = await setEventFraudLabel(trx, environment, clientId, ev.entity_id, ev.trade_id!, now);
    labelled += Number(result.numUpdatedRows ?? 0);
  }
  return labelled;
}

/**
 * A reviewer's verdict as the decision's label (source review, labelled_by the reviewer), inside
 * the resolution's transaction. Only where no API or event label exists (see the head of this
 * file): returns whether the decision was labelled.
 */
export async function applyReviewLabel(
  trx: Transaction<Database> | Kysely<Database>,
  decisionId: string,
  label: 'fraud' | 'legit',
  note: string | null,
  by: string,
  now: number,
): Promise<boolean> {
  const result = await setReviewLabel(trx, decisionId, label, note, by, now);
  return Number(result.numUpdatedRows ?? 0) > 0;
}
