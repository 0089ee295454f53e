// `vouch policy fit` and `vouch policy backtest` (docs/api.md, "Policies"): the commands that run as
// policy jobs, in a worker, drawing their progress on standard error while they run.
import type { Command } from 'commander';
import { Option } from 'commander';
import type { Environment } from '../lib/principal.ts';
import type { Store } from '../store/db.ts';
import { activeRow, getPolicy, insertPolicy, parseDocument, type PolicyRow } from './repository.ts';
import { policyDetail } from './route-support.ts';
import { backtestFromStore, fitFromStore, type JobOptions } from './service.ts';
import { jobProgressBar, withJobProgress } from './cli-progress.ts';
import type { WorkerProgress } from './job-thread.ts';
import { DEFAULT_LEASE } from './jobs.ts';
import type { OperatingTarget } from './operating.ts';
import { environmentOption, number, print, time, type Env, type Progress } from './cli-options.ts';

type FitTargetOptions = {
  targetLevel?: 'high' | 'critical';
  maxFalsePositiveRate?: number;
  maxShareFlagged?: number;
  minPrecision?: number;
};

/** The fit's operating-point target from its options: at most one limit. */
function targetFrom(o: FitTargetOptions, usageError: (m: string) => Error): OperatingTarget | undefined {
  const limits = {
    max_false_positive_rate: o.maxFalsePositiveRate,
    max_share_flagged: o.maxShareFlagged,
    min_precision: o.minPrecision,
  };
  const given = Object.entries(limits).filter(([, v]) => v !== undefined);
  if (given.length > 1)
    throw usageError('give at most one of --max-false-positive-rate, --max-share-flagged, --min-precision');
  if (given.length === 0) {
    if (o.targetLevel !== undefined)
      throw usageError('--target-level needs one of --max-false-positive-rate, --max-share-flagged, --min-precision');
    return undefined;
  }
  return { level: o.targetLevel ?? 'high', [given[0]![0]]: given[0]![1] } as OperatingTarget;
}

/**
 * The job's worker reads the store over its own connection, so this process's event loop is free
 * to draw the progress; the heartbeat (and with it the progress GET /api/v1/policy-jobs shows)
 * comes every second.
 */
const jobOptions = (store: Store, progress?: ReturnType<typeof jobProgressBar>): JobOptions => ({
  store,
  lease: { ...DEFAULT_LEASE, heartbeatMs: 1_000 },
  ...(progress ? { onProgress: (p: WorkerProgress) => progress.onProgress(p) } : {}),
});

/** What the commands share with the other policy commands (cli.ts). */
interface JobCommandSupport {
  /** runs on the store, turning the policy errors into failures */
  run: <T>(fn: (store: Store) => Promise<T>) => Promise<T>;
  /** the version, or a failure */
  row: (store: Store, environment: Environment, version: string) => Promise<PolicyRow>;
  usageError: (message: string) => Error;
  failure: (message: string) => Error;
}

export function registerJobCommands(policy: Command, { run, row, usageError, failure }: JobCommandSupport): void {
  policy
    .command('fit')
    .description('fit a candidate to the labelled score decisions; prints it with its report')
    .option('--since <time>', 'decisions made at or after (RFC 3339)', time)
    .option('--until <time>', 'decisions made before (RFC 3339)', time)
    .option('--base-version <version>', 'the policy to start from (default: the active one)')
    .option(
      '--assume-legit-after-days <n>',
      'an unlabelled decision this old whose trade completed counts as legit (default 60)',
      number(0, 3650),
    )
    .option('--holdout-fraction <x>', 'share of entities held out for the report (default 0.3)', number(0.01, 0.99))
    .addOption(
      new Option('--target-level <level>', 'the level an operating-point target sets (default high)').choices([
        'high',
        'critical',
      ]),
    )
    .option(
      '--max-false-positive-rate <x>',
      'target: at most this share of legitimate holdout decisions flagged at the level',
      number(0, 1),
    )
    .option(
      '--max-share-flagged <x>',
      'target: at most this share of holdout decisions flagged at the level (a review budget)',
      number(0, 1),
    )
    .option(
      '--min-precision <x>',
      'target: at least this share of fraud among the decisions flagged at the level',
      number(0, 1),
    )
    .addOption(environmentOption())
    .option('--progress', "draw the job's progress on standard error (the default when it is a terminal)")
    .action(
      (
        o: Env &
          FitTargetOptions &
          Progress & {
            since?: string;
            until?: string;
            baseVersion?: string;
            assumeLegitAfterDays?: number;
            holdoutFraction?: number;
          },
      ) =>
        run(async (store) => {
          const target = targetFrom(o, usageError);
          const base = o.baseVersion
            ? await row(store, o.environment, o.baseVersion)
            : await activeRow(store.db, o.environment);
          if (!base) throw failure('there is no active policy to fit from');
          const progress = o.progress || process.stderr.isTTY === true ? jobProgressBar('fit') : undefined;
          const { policy: fitted, report } = await withJobProgress(
            progress,
            fitFromStore(
              store.db,
              {
                environment: o.environment,
                base: parseDocument(base),
                since: o.since === undefined ? undefined : Date.parse(o.since),
                until: o.until === undefined ? undefined : Date.parse(o.until),
                assumeLegitAfterDays: o.assumeLegitAfterDays,
                holdoutFraction: o.holdoutFraction,
                target,
              },
              jobOptions(store, progress),
            ),
          );
          print(
            policyDetail(
              await insertPolicy(store.db, o.environment, {
                policy: fitted,
                source: 'fit',
                parentVersion: base.version,
                createdBy: 'cli',
                report,
              }),
            ),
          );
        }),
    );
  policy
    .command('backtest')
    .description('replay a version on the stored score decisions (JSON)')
    .argument('<version>')
    .option('--since <time>', 'decisions made at or after (RFC 3339)', time)
    .option('--until <time>', 'decisions made before (RFC 3339)', time)
    .option('--progress', "draw the job's progress on standard error (the default when it is a terminal)")
    .addOption(environmentOption())
    .action((version: string, o: Env & Progress & { since?: string; until?: string }) =>
      run(async (store) => {
        const target = parseDocument(await row(store, o.environment, version));
        const progress = o.progress || process.stderr.isTTY === true ? jobProgressBar('backtest') : undefined;
        print(
          await withJobProgress(
            progress,
            backtestFromStore(
              store.db,
              o.environment,
              target,
              {
                since: o.since === undefined ? undefined : Date.parse(o.since),
                until: o.until === undefined ? undefined : Date.parse(o.until),
              },
              async (v) => {
                const r = await getPolicy(store.db, o.environment, v);
                return r ? parseDocument(r) : undefined;
              },
              jobOptions(store, progress),
            ),
          ),
        );
      }),
    );
}
