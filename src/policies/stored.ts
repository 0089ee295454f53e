// The stored score decisions a fit or backtest reads, a page at a time, oldest first. Used by the
// job's worker thread over its own connection, or by the main thread feeding the worker when the
// store cannot be opened twice (an in-memory SQLite database).
import type { Kysely } from 'kysely';
import type { Environment } from '../lib/principal.ts';
import type { Database } from '../store/schema.ts';
import { completionIndex } from './labels.ts';
import { completionCutoff, type JobTask, type WireDecision } from './job-tasks.ts';
import { reviewSampleRateOf } from '../model/outcome-policy.ts';
import { countScoredWithFeatures, scoredWithFeaturesPage } from '../audit/decision-history-repository.ts';
import { tradeCompletionsOf } from '../entities/event-repository.ts';
import { policyDocumentsOf } from './policy-document-repository.ts';

export interface Window {
  since?: number;
  until?: number;
}

const PAGE = 2000;

/** The score decisions a job over the window will read, counted once as it starts (its progress). */
export function countDecisions(db: Kysely<Database>, environment: Environment, window: Window): Promise<number> {
  return countScoredWithFeatures(db, environment, window);
}

const num = (v: number | string | bigint | null | undefined): number | null =>
  v === null || v === undefined ? null : Number(v);

/**
 * Every score decision with stored features in the window, oldest first, a page at a time: each
 * read is short, and only the pages in flight are ever held. A fit's rows also carry what the
 * labels by source and the sampled reviews' weights need (labels.ts, trainingExample): the label's
 * source, the outcome, the review the decision opened (one at most: reviews.decision_id is
 * unique, so the join never repeats a decision) and the deciding policy's review sample rate.
 */
async function* storedDecisions(
  db: Kysely<Database>,
  environment: Environment,
  window: Window,
  forFit: boolean,
): AsyncGenerator<WireDecision[]> {
  const rates = forFit ? await sampleRates(db, environment) : new Map<string, number>();
  let after: { at: number; id: string } | undefined;
  for (;;) {
    const rows = await scoredWithFeaturesPage(db, environment, window, after, PAGE);
    if (rows.length > 0) {
      yield rows.map((r) => ({
        subject_id: r.subject_id,
        created_at: Number(r.created_at),
        features: r.features!,
        feature_set: r.feature_set === null || r.feature_set === undefined ? null : Number(r.feature_set),
        trade_id: r.trade_id ?? null,
        risk_level: r.risk_level ?? null,
        label: r.label ?? null,
        shadow_version: r.shadow_version ?? null,
        shadow_score: r.shadow_score === null || r.shadow_score === undefined ? null : Number(r.shadow_score),
        policy_version: r.policy_version,
        request: r.request ?? null,
        ...(forFit
          ? {
              label_source: r.label_source ?? null,
              outcome: r.outcome ?? null,
              review:
                r.review_reason === null || r.review_reason === undefined
                  ? null
                  : {
                      reason: r.review_reason,
                      sample_rate: num(r.review_sample_rate),
                      resolution: r.review_resolution ?? null,
                    },
              sampling_rate: rates.get(r.policy_version) ?? null,
            }
          : {}),
      }));
    }
    if (rows.length < PAGE) return;
    const last = rows[rows.length - 1]!;
    after = { at: Number(last.created_at), id: last.id };
  }
}

/**
 * The review sample rate of every policy of the environment that has one (the deciding policy's
 * rate says whether an unreviewed approval was passed over by the draw). Policies are few.
 */
async function sampleRates(db: Kysely<Database>, environment: Environment): Promise<Map<string, number>> {
  const rows = await policyDocumentsOf(db, environment);
  const rates = new Map<string, number>();
  for (const row of rows) {
    try {
      const rate = reviewSampleRateOf(JSON.parse(row.document) as { reviewSampleRate?: number });
      if (typeof rate === 'number' && rate > 0) rates.set(row.version, rate);
    } catch {
      // A document that does not parse cannot have sampled anything.
    }
  }
  return rates;
}

/**
 * Marks, on each page, the decisions that can only be labelled by a later trade.completed event
 * (unlabelled, with a trade id, older than assume_legit_after_days) and whose trade did complete.
 */
async function* withCompletions(
  db: Kysely<Database>,
  environment: Environment,
  pages: AsyncIterable<WireDecision[]>,
  cutoff: number,
): AsyncGenerator<WireDecision[]> {
  for await (const page of pages) {
    const waiting = page.filter(
      (r) => r.label === null && typeof r.trade_id === 'string' && r.trade_id !== '' && r.created_at < cutoff,
    );
    const entities = [...new Set(waiting.map((r) => r.subject_id))];
    const events: { type: string; entity_id: string; trade_id?: string }[] = [];
    for (let i = 0; i < entities.length; i += 500) {
      const chunk = entities.slice(i, i + 500);
      const found = await tradeCompletionsOf(db, environment, chunk);
      for (const e of found) {
        const tradeId = (JSON.parse(e.payload) as { trade_id?: unknown }).trade_id;
        if (typeof tradeId === 'string')
          events.push({ type: 'trade.completed', entity_id: e.entity_id, trade_id: tradeId });
      }
    }
    const completed = completionIndex(events);
    for (const r of waiting) r.completed = completed(r.subject_id, r.trade_id!);
    yield page;
  }
}

/** The pages a job folds in: a fit's also say which waiting decisions' trades completed. */
export function jobPages(
  db: Kysely<Database>,
  task: JobTask,
  environment: Environment,
  window: Window,
): AsyncIterable<WireDecision[]> {
  const pages = storedDecisions(db, environment, window, task.kind === 'fit');
  return task.kind === 'fit' ? withCompletions(db, environment, pages, completionCutoff(task)) : pages;
}
