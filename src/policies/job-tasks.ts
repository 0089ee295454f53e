// The work of a fit or a backtest, fed the stored score decisions page by page (issue 18). It runs
// in the job's worker thread (job-worker.ts), away from the event loop; it is plain code with no
// I/O, so the same results come out as when it ran on the request path. What it keeps between
// pages: a backtest, the labelled scores its metrics need; a fit, the labelled decisions it fits.
import type { Policy } from '../model/policy.ts';
import type { RiskLevel } from '../model/types.ts';
import { BacktestTally, type BacktestResult } from './backtest.ts';
import { decodeFeatures, replayableFeatures, type FeatureRecord } from '../model/feature-vector.ts';
import { InsufficientLabelsError } from './fit.ts';
import { LEFT_OUT, trainingExample } from './labels.ts';
import { computeMetrics, type Label, type Metrics } from './metrics.ts';
import { plotsFromScores, shapePlots, type PlotData } from './plots.ts';
import { fitCandidate, type FitReport } from './report.ts';
import { LabelledSplit } from './samples.ts';
import type { OperatingTarget } from './operating.ts';
import type { JobPhase } from './jobs.ts';
import type { Economics } from '../model/economics.ts';
import type { CostInputs } from './cost-fit.ts';

/** A stored score decision as the store gives it; the feature vector still its stored text (decodeFeatures). */
export interface WireDecision {
  subject_id: string;
  created_at: number;
  features: string;
  /** which definition of the features the row follows (null: before dispute_rate was centred) */
  feature_set: number | null;
  trade_id: string | null;
  risk_level: string | null;
  label: string | null;
  shadow_version: string | null;
  shadow_score: number | null;
  /** the policy that made the decision */
  policy_version: string;
  /** the request's summary (amount, currency; JSON), null before decisions kept it */
  request?: string | null;
  /** fits only: a trade.completed event exists for this entity and trade_id */
  completed?: boolean;
  /** fits only: 'api' | 'event' | 'review' for a labelled decision */
  label_source?: string | null;
  /** fits only: the decision's outcome (null before outcomes) */
  outcome?: string | null;
  /** fits only: the review the decision opened, if any */
  review?: { reason: string; sample_rate: number | null; resolution: string | null } | null;
  /** fits only: the deciding policy's review sample rate, null when it sampled nothing */
  sampling_rate?: number | null;
}

export type JobTask =
  | { kind: 'backtest'; policy: Policy }
  | {
      kind: 'fit';
      base: Policy;
      version: string;
      now: number;
      assumeLegitAfterDays: number;
      holdoutFraction: number;
      target?: OperatingTarget;
      /** the cost objective's economics (docs/api.md, "Decisions by money"); absent: the target objective */
      economics?: Economics;
    };

export interface LiveFigures {
  decisions: number;
  labelled: number;
  metrics: Metrics;
}

/** `deciding`: the versions of the policies that made the decisions replayed */
export type BacktestOutput = BacktestResult & { live?: LiveFigures; deciding: string[] };
export type StoredReport = FitReport & { holdout_fraction: number; plots: PlotData };
export type FitOutput = { policy: Policy; report: StoredReport };

export interface JobWork<T> {
  add(page: readonly WireDecision[]): void;
  /** the labelled decisions kept so far */
  labelled(): number;
  /** `phase` hears when each later phase starts (progress) */
  finish(phase?: (phase: JobPhase) => void): T;
}

/** The row's vector in the current definition, older definitions translated with `policy`'s settings. */
const features = (row: WireDecision, policy: Policy): FeatureRecord =>
  replayableFeatures(decodeFeatures(row.features), row.feature_set, policy.disputePrior);
/** The amount and currency a decision was asked about, for the money figures; nulls when unknown. */
function requestMoney(row: Pick<WireDecision, 'request'>): { amount: number | null; currency: string | null } {
  if (row.request === null || row.request === undefined) return { amount: null, currency: null };
  try {
    const r = JSON.parse(row.request) as { amount?: unknown; currency?: unknown };
    return {
      amount: typeof r.amount === 'number' && Number.isFinite(r.amount) ? r.amount : null,
      currency: typeof r.currency === 'string' ? r.currency : null,
    };
  } catch {
    return { amount: null, currency: null };
  }
}
const explicitLabel = (row: WireDecision): Label | null =>
  row.label === 'fraud' ? 1 : row.label === 'legit' ? 0 : null;

function backtestWork(policy: Policy): JobWork<BacktestOutput> {
  const tally = new BacktestTally(policy);
  // The shadow policy's own scores, stored live with the decisions it ran beside.
  let live = 0;
  const liveScores: number[] = [];
  const liveLabels: Label[] = [];
  const deciding = new Set<string>();
  let labelledCount = 0;
  return {
    add(page) {
      for (const row of page) {
        deciding.add(row.policy_version);
        const label = explicitLabel(row);
        if (label !== null) labelledCount++;
        tally.add({
          features: features(row, policy),
          label,
          riskLevel: (row.risk_level ?? 'low') as RiskLevel,
          ...requestMoney(row),
        });
        if (row.shadow_version === policy.version && row.shadow_score !== null) {
          live++;
          if (label !== null) {
            liveScores.push(row.shadow_score);
            liveLabels.push(label);
          }
        }
      }
    },
    labelled: () => labelledCount,
    finish(phase) {
      phase?.('reporting');
      const result: BacktestOutput = { ...tally.result(), deciding: [...deciding].sort() };
      if (live > 0)
        result.live = { decisions: live, labelled: liveLabels.length, metrics: computeMetrics(liveScores, liveLabels) };
      return result;
    },
  };
}

function fitWork(task: Extract<JobTask, { kind: 'fit' }>): JobWork<FitOutput> {
  // Compact columns, split by entity as the decisions arrive (samples.ts): a million labelled
  // decisions fit in the worker's heap.
  const labelled = new LabelledSplit(task.holdoutFraction);
  const seen = { decisions: 0, first: Infinity, last: -Infinity };
  const reviewerChecks = { reviews: 0, agreed: 0 };
  return {
    add(page) {
      for (const row of page) {
        seen.decisions++;
        seen.first = Math.min(seen.first, row.created_at);
        seen.last = Math.max(seen.last, row.created_at);
        checkReviewer(row, reviewerChecks);
        const example = trainingExample(
          {
            createdAt: row.created_at,
            entityId: row.subject_id,
            tradeId: row.trade_id,
            label: row.label as 'fraud' | 'legit' | null,
            labelSource: row.label_source,
            outcome: row.outcome,
            samplingRate: row.sampling_rate,
            review: row.review && {
              reason: row.review.reason,
              sampleRate: row.review.sample_rate,
              resolution: row.review.resolution,
            },
          },
          { now: task.now, assumeLegitAfterDays: task.assumeLegitAfterDays, completed: () => row.completed === true },
        );
        if (example === LEFT_OUT) labelled.leaveOut();
        else if (example !== null)
          labelled.add({
            entityId: row.subject_id,
            features: features(row, task.base),
            ...example,
            ...requestMoney(row),
          });
      }
    },
    labelled: () => labelled.count,
    finish(phase) {
      phase?.('fitting');
      const { policy, report, holdout } = fitCandidate(labelled, task.base, {
        version: task.version,
        target: task.target,
        onFitted: () => phase?.('reporting'),
        ...(task.economics ? { cost: costInputs(task.economics, seen, reviewerChecks) } : {}),
      });
      // The plots are drawn from the scores behind the report's figures.
      const shapes = shapePlots((name) => labelled.holdout.largest(name), task.base, policy);
      return {
        policy,
        report: { ...report, holdout_fraction: task.holdoutFraction, plots: plotsFromScores(holdout, shapes) },
      };
    },
  };
}

const DAY_MS = 86_400_000;

/** A resolved review whose decision was later labelled by an event or the API: did the reviewer agree? */
function checkReviewer(row: WireDecision, checks: { reviews: number; agreed: number }): void {
  const resolution = row.review?.resolution;
  if ((resolution !== 'approve' && resolution !== 'decline') || (row.label !== 'fraud' && row.label !== 'legit'))
    return;
  if (row.label_source !== 'event' && row.label_source !== 'api') return;
  checks.reviews++;
  if ((resolution === 'decline') === (row.label === 'fraud')) checks.agreed++;
}

/** The decision rate over the decisions the fit read (at least a day), and the reviewers' record. */
function costInputs(
  economics: Economics,
  seen: { decisions: number; first: number; last: number },
  reviewerChecks: { reviews: number; agreed: number },
): CostInputs {
  const days = seen.decisions > 0 ? Math.max(1, (seen.last - seen.first) / DAY_MS) : null;
  return { economics, decisionsPerDay: days === null ? null : seen.decisions / days, reviewerChecks };
}

/** A fit's decisions created before this may be labelled legit by a later trade.completed (strict). */
export const completionCutoff = (task: Extract<JobTask, { kind: 'fit' }>): number =>
  task.now - task.assumeLegitAfterDays * DAY_MS;

export function jobWork(task: JobTask): JobWork<BacktestOutput | FitOutput> {
  return task.kind === 'fit' ? fitWork(task) : backtestWork(task.policy);
}

/** An error as it crosses from the worker: the kinds a caller maps to a problem keep their fields. */
export interface WireError {
  name: string;
  message: string;
  fraud?: number;
  legit?: number;
}

export function toWireError(err: unknown): WireError {
  if (err instanceof InsufficientLabelsError)
    return { name: err.name, message: err.message, fraud: err.fraud, legit: err.legit };
  const e = err instanceof Error ? err : new Error(String(err));
  return { name: e.name, message: e.message };
}

export function fromWireError(wire: WireError): Error {
  if (wire.name === 'InsufficientLabelsError')
    return new InsufficientLabelsError(wire.fraud ?? 0, wire.legit ?? 0, wire.message);
  const err = new Error(`policy job: ${wire.message}`);
  err.name = wire.name;
  return err;
}
