// Fits and backtests over stored score decisions: the store side of the pure modules. Only
// decisions that kept their feature vector take part; features are never recomputed from today's
// history. Each job holds its environment's lease (jobs.ts) and runs in a worker thread
// (job-thread.ts) that reads the store a page at a time (docs/decisions.md).
import type { Economics } from '../model/economics.ts';
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Policy } from '../model/policy.ts';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';
import type { Store } from '../store/db.ts';
import { featureParameterChanges, type BacktestResult } from './backtest.ts';
import { DEFAULT_ASSUME_LEGIT_AFTER_DAYS } from './labels.ts';
import { DEFAULT_HOLDOUT_FRACTION } from './split.ts';
import type { BacktestOutput, FitOutput, JobTask, LiveFigures, StoredReport } from './job-tasks.ts';
import { storeSource } from '../store/readers.ts';
import type { OperatingTarget } from './operating.ts';
import { runJob, runJobReading, type WorkerProgress } from './job-thread.ts';
import { withLease, type LeaseSettings } from './jobs.ts';
import type { Claimant } from './job-turns.ts';
import { countDecisions, jobPages, type Window } from './stored.ts';

export type { Window };

export interface FitRequest extends Window {
  /** the labelled decisions and events of this environment only (test mode) */
  environment: Environment;
  base: Policy;
  assumeLegitAfterDays?: number;
  holdoutFraction?: number;
  /** the operating point for the candidate's thresholds (default: the base's share flagged at high) */
  target?: OperatingTarget;
  /** the cost objective's economics (cost-fit.ts, fitEconomics); absent: thresholds by the target alone */
  economics?: Economics;
  now?: number;
}

export type { StoredReport };

export interface JobOptions {
  /**
   * The store `db` belongs to: the job's worker then reads it over a connection of its own, so no
   * read runs on the caller's event loop. Without it (or for an in-memory SQLite database), the
   * caller's thread reads the pages and feeds them to the worker.
   */
  store?: Store;
  lease?: LeaseSettings;
  /** the API caller asking, whose turn at the slot job-turns.ts keeps fair (none from the CLI) */
  claimant?: Claimant;
  /** hears the job's progress as its worker reports it (the lease row has it too, less often) */
  onProgress?: (progress: WorkerProgress) => void;
}

/** Runs a job in a worker thread while holding the environment's lease. */
function runLeased<T>(
  db: Kysely<Database>,
  task: JobTask,
  environment: Environment,
  window: Window,
  options: JobOptions,
): Promise<T> {
  const source = options.store ? storeSource(options.store) : undefined;
  const only: Window = { since: window.since, until: window.until };
  return withLease(
    db,
    environment,
    task.kind,
    async (job) => {
      const onProgress = (p: WorkerProgress) => {
        options.onProgress?.(p);
        return job.progress({ phase: p.phase, decisionsRead: p.decisionsRead, labelled: p.labelled, total: p.total });
      };
      if (source) return runJobReading<T>(task, source, environment, only, job.signal, onProgress);
      // Without a second connection (in-memory SQLite) the count is cheap: the store is small.
      const total = await countDecisions(db, environment, only);
      return runJob<T>(task, jobPages(db, task, environment, only), job.signal, onProgress, total);
    },
    options.lease,
    options.claimant,
  );
}

/**
 * Fits a candidate in a worker thread. Throws InsufficientLabelsError (422) when the labels cannot
 * support a fit, JobConflictError (409) while another fit or backtest of the environment runs.
 */
export async function fitFromStore(
  db: Kysely<Database>,
  request: FitRequest,
  options: JobOptions = {},
): Promise<{ policy: Policy; report: StoredReport }> {
  const now = request.now ?? Date.now();
  const version = `fit-${new Date(now).toISOString().replace(/[-:]|\.\d+/g, '')}-${randomBytes(3).toString('hex')}`;
  const task: JobTask = {
    kind: 'fit',
    base: request.base,
    version,
    now,
    assumeLegitAfterDays: request.assumeLegitAfterDays ?? DEFAULT_ASSUME_LEGIT_AFTER_DAYS,
    holdoutFraction: request.holdoutFraction ?? DEFAULT_HOLDOUT_FRACTION,
    ...(request.target ? { target: request.target } : {}),
    ...(request.economics ? { economics: request.economics } : {}),
  };
  return runLeased<FitOutput>(db, task, request.environment, request, options);
}

export interface BacktestBody extends BacktestResult {
  version: string;
  /** value-shaping settings that differ from a deciding policy: the replay is then approximate */
  approximate: string[];
  /** the shadow policy's own scores, stored live with the decisions it ran beside */
  live?: LiveFigures;
}

/** Replays a policy in a worker thread; JobConflictError (409) while another job of the environment runs. */
export async function backtestFromStore(
  db: Kysely<Database>,
  environment: Environment,
  policy: Policy,
  window: Window,
  deciding: (version: string) => Promise<Policy | undefined>,
  options: JobOptions = {},
): Promise<BacktestBody> {
  const {
    live,
    deciding: versions,
    ...result
  } = await runLeased<BacktestOutput>(db, { kind: 'backtest', policy }, environment, window, options);
  const approximate = new Set<string>();
  for (const v of versions) {
    const p = await deciding(v);
    if (p) for (const k of featureParameterChanges(p, policy)) approximate.add(k);
  }
  const body: BacktestBody = { version: policy.version, ...result, approximate: [...approximate].sort() };
  if (live) body.live = live;
  return body;
}
