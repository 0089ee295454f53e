// Fits and backtests over stored score decisions (CONTRACT §9): the store side of the pure
// modules. Only decisions that kept their feature vector (§8) take part; features are never
// recomputed from today's history.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Policy } from '../config/policy.ts';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../auth/principal.ts';
import type { RiskLevel } from '../trust/types.ts';
import { backtest, featureParameterChanges, type BacktestResult } from './backtest.ts';
import { replayableFeatures, type FeatureRecord } from './features.ts';
import { completionIndex, trainingLabel, DEFAULT_ASSUME_LEGIT_AFTER_DAYS } from './labels.ts';
import { computeMetrics, type Label, type Metrics } from './metrics.ts';
import { fitCandidate, type FitReport, type LabelledDecision } from './report.ts';
import { DEFAULT_HOLDOUT_FRACTION, splitByEntity } from './split.ts';
import { plotData, type PlotData } from './plots.ts';

export interface Window {
  since?: number;
  until?: number;
}

interface StoredRow {
  id: string;
  subject_id: string;
  created_at: number;
  features: string;
  feature_set: number | null;
  trade_id: string | null;
  risk_level: string | null;
  label: string | null;
  shadow_version: string | null;
  shadow_score: number | null;
}

const PAGE = 5000;

/**
 * Every score decision with stored features in the window, oldest first, read in pages so a large
 * store never holds one huge result set open.
 */
async function storedDecisions(db: Kysely<Database>, environment: Environment, window: Window): Promise<StoredRow[]> {
  const out: StoredRow[] = [];
  let after: { at: number; id: string } | undefined;
  for (;;) {
    let q = db.selectFrom('decisions')
      .select(['id', 'subject_id', 'created_at', 'features', 'feature_set', 'trade_id', 'risk_level', 'label', 'shadow_version', 'shadow_score'])
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
    for (const r of rows) {
      out.push({ ...r, created_at: Number(r.created_at), features: r.features!, feature_set: r.feature_set === null || r.feature_set === undefined ? null : Number(r.feature_set), shadow_score: r.shadow_score === null || r.shadow_score === undefined ? null : Number(r.shadow_score) } as StoredRow);
    }
    if (rows.length < PAGE) return out;
    const last = rows[rows.length - 1]!;
    after = { at: Number(last.created_at), id: last.id };
  }
}

/** Which (entity, trade) pairs have a trade.completed event, for the decisions that could use one. */
async function completions(db: Kysely<Database>, environment: Environment, rows: readonly StoredRow[]): Promise<(entityId: string, tradeId: string) => boolean> {
  const entities = [...new Set(rows.filter((r) => r.label === null && r.trade_id).map((r) => r.subject_id))];
  const events: { type: string; entity_id: string; trade_id?: string }[] = [];
  for (let i = 0; i < entities.length; i += 500) {
    const chunk = entities.slice(i, i + 500);
    const found = await db.selectFrom('events').select(['entity_id', 'payload']).where('environment', '=', environment).where('type', '=', 'trade.completed').where('entity_id', 'in', chunk).execute();
    for (const e of found) {
      const tradeId = (JSON.parse(e.payload) as { trade_id?: unknown }).trade_id;
      if (typeof tradeId === 'string') events.push({ type: 'trade.completed', entity_id: e.entity_id, trade_id: tradeId });
    }
  }
  return completionIndex(events);
}

/** The row's vector in the current definition, older definitions translated with `policy`'s settings. */
const features = (row: StoredRow, policy: Policy): FeatureRecord =>
  replayableFeatures(JSON.parse(row.features) as FeatureRecord, row.feature_set, policy.disputePrior);
const explicitLabel = (row: StoredRow): Label | null => (row.label === 'fraud' ? 1 : row.label === 'legit' ? 0 : null);

export interface FitRequest extends Window {
  /** the labelled decisions and events of this environment only (test mode) */
  environment: Environment;
  base: Policy;
  assumeLegitAfterDays?: number;
  holdoutFraction?: number;
  now?: number;
}

/** Throws InsufficientLabelsError (422) when the labels cannot support a fit. */
export type StoredReport = FitReport & { holdout_fraction: number; plots: PlotData };

export async function fitFromStore(db: Kysely<Database>, request: FitRequest): Promise<{ policy: Policy; report: StoredReport }> {
  const rows = await storedDecisions(db, request.environment, request);
  const completed = await completions(db, request.environment, rows);
  const now = request.now ?? Date.now();
  const labelled: LabelledDecision[] = [];
  for (const row of rows) {
    const label = trainingLabel(
      { createdAt: row.created_at, entityId: row.subject_id, tradeId: row.trade_id, label: row.label as 'fraud' | 'legit' | null },
      { now, assumeLegitAfterDays: request.assumeLegitAfterDays ?? DEFAULT_ASSUME_LEGIT_AFTER_DAYS, completed },
    );
    if (label !== null) labelled.push({ entityId: row.subject_id, features: features(row, request.base), label });
  }
  const version = `fit-${new Date(now).toISOString().replace(/[-:]|\.\d+/g, '')}-${randomBytes(3).toString('hex')}`;
  const fraction = request.holdoutFraction ?? DEFAULT_HOLDOUT_FRACTION;
  const { policy, report } = fitCandidate(labelled, request.base, { version, holdoutFraction: fraction });
  // The plots are drawn from the same holdout as the report's figures (the split is deterministic).
  const { holdout } = splitByEntity(labelled, (d) => d.entityId, { fraction });
  return { policy, report: { ...report, holdout_fraction: fraction, plots: plotData(holdout, request.base, policy) } };
}

export interface BacktestBody extends BacktestResult {
  version: string;
  /** value-shaping settings that differ from a deciding policy: the replay is then approximate */
  approximate: string[];
  /** the shadow policy's own scores, stored live with the decisions it ran beside */
  live?: { decisions: number; labelled: number; metrics: Metrics };
}

export async function backtestFromStore(db: Kysely<Database>, environment: Environment, policy: Policy, window: Window, deciding: (version: string) => Promise<Policy | undefined>): Promise<BacktestBody> {
  const rows = await storedDecisions(db, environment, window);
  const result = backtest(policy, rows.map((r) => ({ features: features(r, policy), label: explicitLabel(r), riskLevel: (r.risk_level ?? 'low') as RiskLevel })));
  const approximate = new Set<string>();
  for (const v of await decidingVersions(db, environment, window)) {
    const p = await deciding(v);
    if (p) for (const k of featureParameterChanges(p, policy)) approximate.add(k);
  }
  const body: BacktestBody = { version: policy.version, ...result, approximate: [...approximate].sort() };
  const live = rows.filter((r) => r.shadow_version === policy.version && r.shadow_score !== null);
  if (live.length > 0) {
    const scored = live.filter((r) => explicitLabel(r) !== null);
    body.live = {
      decisions: live.length,
      labelled: scored.length,
      metrics: computeMetrics(scored.map((r) => r.shadow_score!), scored.map((r) => explicitLabel(r)!)),
    };
  }
  return body;
}

async function decidingVersions(db: Kysely<Database>, environment: Environment, window: Window): Promise<string[]> {
  let q = db.selectFrom('decisions').select('policy_version').distinct().where('environment', '=', environment).where('kind', '=', 'score').where('features', 'is not', null);
  if (window.since !== undefined) q = q.where('created_at', '>=', window.since);
  if (window.until !== undefined) q = q.where('created_at', '<', window.until);
  return (await q.execute()).map((r) => r.policy_version);
}

