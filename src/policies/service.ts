// Fits and backtests over stored score decisions: the store side of the pure modules. Only
// decisions that kept their feature vector take part; features are never recomputed from today's
// history. Each job holds its environment's lease (jobs.ts) and runs in a worker thread
// (job-thread.ts) that the store is streamed to a page at a time (docs/decisions.md).
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Policy } from '../config/policy.ts';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../auth/principal.ts';
import { featureParameterChanges, type BacktestResult } from './backtest.ts';
import { completionIndex, DEFAULT_ASSUME_LEGIT_AFTER_DAYS } from './labels.ts';
import { DEFAULT_HOLDOUT_FRACTION } from './split.ts';
import type { BacktestOutput, FitOutput, JobTask, LiveFigures, StoredReport, WireDecision } from './job-tasks.ts';
import { runJob } from './job-thread.ts';
import { withLease, type LeaseSettings } from './jobs.ts';

export interface Window {
  since?: number;
  until?: number;
}

const PAGE = 2000;
const DAY_MS = 86_400_000;

/**
 * Every score decision with stored features in the window, oldest first, a page at a time: each
 * read is a short slice of the event loop, and only the pages in flight are ever held.
 */
async function* storedDecisions(db: Kysely<Database>, environment: Environment, window: Window): AsyncGenerator<WireDecision[]> {
  let after: { at: number; id: string } | undefined;
  for (;;) {
    let q = db.selectFrom('decisions')
      .select(['id', 'subject_id', 'created_at', 'features', 'trade_id', 'risk_level', 'label', 'shadow_version', 'shadow_score'])
      .where('environment', '=', environment)
      .where('kind', '=', 'score')
      .where('features', 'is not', null);
    if (window.since !== undefined) q = q.where('created_at', '>=', window.since);
    if (window.until !== undefined) q = q.where('created_at', '<', window.until);
    if (after) {
      const { at, id } = after;
      q = q.where((eb) => eb.or([eb('created_at', '>', at), eb.and([eb('created_at', '=', at), eb('id', '>', id)])]));
    }
    const rows = await q.orderBy('created_at').orderBy('id').limit(PAGE).execute();
    if (rows.length > 0) {
      yield rows.map((r) => ({
        subject_id: r.subject_id,
        created_at: Number(r.created_at),
        features: r.features!,
        trade_id: r.trade_id ?? null,
        risk_level: r.risk_level ?? null,
        label: r.label ?? null,
        shadow_version: r.shadow_version ?? null,
        shadow_score: r.shadow_score === null || r.shadow_score === undefined ? null : Number(r.shadow_score),
      }));
    }
    if (rows.length < PAGE) return;
    const last = rows[rows.length - 1]!;
    after = { at: Number(last.created_at), id: last.id };
  }
}

/**
 * Marks, on each page, the decisions that can only be labelled by a later trade.completed event
 * (§8: unlabelled, with a trade id, older than assume_legit_after_days) and whose trade did complete.
 */
async function* withCompletions(db: Kysely<Database>, environment: Environment, pages: AsyncIterable<WireDecision[]>, cutoff: number): AsyncGenerator<WireDecision[]> {
  for await (const page of pages) {
    const waiting = page.filter((r) => r.label === null && typeof r.trade_id === 'string' && r.trade_id !== '' && r.created_at < cutoff);
    const entities = [...new Set(waiting.map((r) => r.subject_id))];
    const events: { type: string; entity_id: string; trade_id?: string }[] = [];
    for (let i = 0; i < entities.length; i += 500) {
      const chunk = entities.slice(i, i + 500);
      const found = await db.selectFrom('events').select(['entity_id', 'payload']).where('environment', '=', environment).where('type', '=', 'trade.completed').where('entity_id', 'in', chunk).execute();
      for (const e of found) {
        const tradeId = (JSON.parse(e.payload) as { trade_id?: unknown }).trade_id;
        if (typeof tradeId === 'string') events.push({ type: 'trade.completed', entity_id: e.entity_id, trade_id: tradeId });
      }
    }
    const completed = completionIndex(events);
    for (const r of waiting) r.completed = completed(r.subject_id, r.trade_id!);
    yield page;
  }
}

export interface FitRequest extends Window {
  /** the labelled decisions and events of this environment only (test mode) */
  environment: Environment;
  base: Policy;
  assumeLegitAfterDays?: number;
  holdoutFraction?: number;
  now?: number;
}

export type { StoredReport };

/**
 * Fits a candidate in a worker thread, holding the environment's job lease. Throws
 * InsufficientLabelsError (422) when the labels cannot support a fit, JobConflictError (409) when
 * another fit or backtest of the environment is running.
 */
export async function fitFromStore(db: Kysely<Database>, request: FitRequest, lease?: LeaseSettings): Promise<{ policy: Policy; report: StoredReport }> {
  const now = request.now ?? Date.now();
  const assumeLegitAfterDays = request.assumeLegitAfterDays ?? DEFAULT_ASSUME_LEGIT_AFTER_DAYS;
  const version = `fit-${new Date(now).toISOString().replace(/[-:]|\.\d+/g, '')}-${randomBytes(3).toString('hex')}`;
  const task: JobTask = { kind: 'fit', base: request.base, version, now, assumeLegitAfterDays, holdoutFraction: request.holdoutFraction ?? DEFAULT_HOLDOUT_FRACTION };
  // trainingLabel's "older than N days" is strict: created_at < now − N days.
  const cutoff = now - assumeLegitAfterDays * DAY_MS;
  return withLease(db, request.environment, 'fit', (job) =>
    runJob<FitOutput>(task, withCompletions(db, request.environment, storedDecisions(db, request.environment, request), cutoff), job.signal), lease);
}

export interface BacktestBody extends BacktestResult {
  version: string;
  /** value-shaping settings that differ from a deciding policy: the replay is then approximate */
  approximate: string[];
  /** the shadow policy's own scores, stored live with the decisions it ran beside */
  live?: LiveFigures;
}

/** Replays a policy in a worker thread, holding the environment's job lease (409 while another runs). */
export async function backtestFromStore(
  db: Kysely<Database>,
  environment: Environment,
  policy: Policy,
  window: Window,
  deciding: (version: string) => Promise<Policy | undefined>,
  lease?: LeaseSettings,
): Promise<BacktestBody> {
  const { live, ...result } = await withLease(db, environment, 'backtest', (job) =>
    runJob<BacktestOutput>({ kind: 'backtest', policy }, storedDecisions(db, environment, window), job.signal), lease);
  const approximate = new Set<string>();
  for (const v of await decidingVersions(db, environment, window)) {
    const p = await deciding(v);
    if (p) for (const k of featureParameterChanges(p, policy)) approximate.add(k);
  }
  const body: BacktestBody = { version: policy.version, ...result, approximate: [...approximate].sort() };
  if (live) body.live = live;
  return body;
}

async function decidingVersions(db: Kysely<Database>, environment: Environment, window: Window): Promise<string[]> {
  let q = db.selectFrom('decisions').select('policy_version').distinct().where('environment', '=', environment).where('kind', '=', 'score').where('features', 'is not', null);
  if (window.since !== undefined) q = q.where('created_at', '>=', window.since);
  if (window.until !== undefined) q = q.where('created_at', '<', window.until);
  return (await q.execute()).map((r) => r.policy_version);
}

