// What a rule test reads from the store (docs/rules.md, "Testing a rule"): the environment's score
// decisions of the window a page at a time, oldest first, by keyset on (created_at, id) — the
// index decisions_created serves it, each read is short, and only the pages in flight are held
// (the entries of the lists the rule names come from list-history-repository.ts). Used by the worker over its own
// connection, or by the main thread when the store cannot be opened twice (in-memory SQLite).
import type { Kysely } from 'kysely';
import type { Environment } from '../lib/principal.ts';
import type { Database } from '../store/schema.ts';
import type { ReplayRow } from './replay.ts';
import { replayPage } from '../audit/decision-history-repository.ts';

/** [since, until) in ms. */
export interface ReplayWindow {
  since: number;
  until: number;
  /** only this client's decisions (docs/api.md, "Whose data"); absent for an admin, who replays every client's */
  owner?: string;
}

/** Pages of 1000: big enough that a page's round trip is small beside its work, small enough to hold two. */
const REPLAY_PAGE = 1000;

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/**
 * `read`: whether the rule needs the feature vector and the score response (replay-columns.ts, columnsRead); null when
 * not read.
 */
export async function* replayPages(
  db: Kysely<Database>,
  environment: Environment,
  window: ReplayWindow,
  read: { features: boolean; result: boolean },
  page = REPLAY_PAGE,
): AsyncGenerator<ReplayRow[]> {
  let after: { at: number; id: string } | undefined;
  for (;;) {
    const rows = await replayPage(db, environment, window, read, after, page);
    if (rows.length > 0) {
      yield rows.map((r) => ({
        id: r.id,
        subject_id: r.subject_id,
        created_at: Number(r.created_at),
        request: r.request ?? null,
        features: r.features ?? null,
        feature_set: num(r.feature_set),
        result: r.result ?? null,
        risk_level: r.risk_level ?? null,
        outcome: r.outcome ?? null,
        rules: r.rules ?? null,
        label: r.label ?? null,
        rule_inputs: r.rule_inputs ?? null,
      }));
    }
    if (rows.length < page) return;
    const last = rows[rows.length - 1]!;
    after = { at: Number(last.created_at), id: last.id };
  }
}
