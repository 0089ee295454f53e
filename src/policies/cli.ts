// `vouch policy …` (docs/api.md, "Policies"): the policy versions in the store, from a terminal. Commands act
// on the store directly, as `vouch clients` does; an activation reaches running instances through
// the revocation feed, like one made over HTTP. Output is JSON (or tab-separated for `list`).
import { readFileSync, writeFileSync } from 'node:fs';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { ENVIRONMENTS, type Environment } from '../lib/principal.ts';
import { loadConfig, type Config } from '../config/env.ts';
import { type Policy } from '../model/policy.ts';
import { validatePolicy } from '../model/policy-document.ts';
import type { Store } from '../store/db.ts';
import { InsufficientLabelsError } from './fit.ts';
import {
  activatePolicy,
  activeRow,
  clearShadow,
  ensurePolicies,
  getPolicy,
  insertPolicy,
  listPolicies,
  parseDocument,
  PolicyConflictError,
  PolicyNotFoundError,
  shadowPolicy,
  type PolicyRow,
} from './repository.ts';
import { policyDetail, policyRecord } from './routes.ts';
import { backtestFromStore, fitFromStore, type JobOptions } from './service.ts';
import { jobProgressBar, withJobProgress } from './cli-progress.ts';
import type { WorkerProgress } from './job-thread.ts';
import { DEFAULT_LEASE } from './jobs.ts';
import { activationMove } from './activation.ts';
import type { OperatingMove, OperatingTarget } from './operating.ts';

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

const pct = (x: number): string => `${(100 * x).toFixed(1)} %`;
const describeMove = (m: OperatingMove): string =>
  `${m.after.version} flags ${pct(m.after.share_flagged_high)} of the ${m.decisions} most recent decisions high or above, against ${pct(m.before.share_flagged_high)} under ${m.before.version}`;

/** Asks on the terminal; without one (a script, a pipe) the answer is no. */
async function confirm(question: string): Promise<boolean> {
  if (!process.stdin.isTTY || !process.stderr.isTTY) return false;
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(`${question}.\nActivate it? [y/N] `)).trim());
  } finally {
    rl.close();
  }
}

export interface PolicyCliSupport {
  withStore: <T>(config: Config, fn: (store: Store) => Promise<T>) => Promise<T>;
  /** an input the command cannot act on (exit status 2) */
  usageError: (message: string) => Error;
  /** understood, but it cannot be done: not found, a conflict, too few labels (exit status 1) */
  failure: (message: string) => Error;
}

const print = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
};

function time(raw: string): string {
  if (Number.isNaN(Date.parse(raw))) throw new InvalidArgumentError('must be an RFC 3339 time');
  return raw;
}
function number(min: number, max: number) {
  return (raw: string): number => {
    const n = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(n) || n < min || n > max)
      throw new InvalidArgumentError(`must be a number from ${min} to ${max}`);
    return n;
  };
}

/** Every policy command acts on one environment's versions (test mode); live unless told. */
const environmentOption = () =>
  new Option('--environment <environment>', 'whose policies: live, or test (test mode)')
    .choices(ENVIRONMENTS)
    .default('live');
type Env = { environment: Environment };
type Progress = { progress?: boolean };

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

export function registerPolicyCommands(program: Command, { withStore, usageError, failure }: PolicyCliSupport): void {
  const run = <T>(fn: (store: Store) => Promise<T>) =>
    withStore(loadConfig(), async (store) => {
      await ensurePolicies(store);
      try {
        return await fn(store);
      } catch (err) {
        if (
          err instanceof PolicyNotFoundError ||
          err instanceof PolicyConflictError ||
          err instanceof InsufficientLabelsError
        )
          throw failure(err.message);
        throw err;
      }
    });
  const row = async (store: Store, environment: Environment, version: string): Promise<PolicyRow> => {
    const found = await getPolicy(store.db, environment, version);
    if (!found) throw failure(`no policy version ${version}`);
    return found;
  };

  const policy = program
    .command('policy')
    .description('scoring policy versions: list, import, fit, backtest, activate, shadow, report');
  policy
    .command('list')
    .description('every version, tab-separated under a header line: version, status, source, created_at, summary')
    .addOption(environmentOption())
    .action((o: Env) =>
      run(async (store) => {
        let after: { at: number; version: string } | undefined;
        process.stdout.write('version\tstatus\tsource\tcreated_at\tsummary\n');
        for (;;) {
          const { rows, more } = await listPolicies(store.db, o.environment, 100, after);
          for (const r of rows.map(policyRecord))
            process.stdout.write(`${r.version}\t${r.status}\t${r.source}\t${r.created_at}\t${r.summary}\n`);
          const last = rows[rows.length - 1];
          if (!more || !last) return;
          after = { at: Number(last.created_at), version: last.version };
        }
      }),
    );
  policy
    .command('show')
    .description('one version with its document and report (JSON)')
    .argument('<version>')
    .addOption(environmentOption())
    .action((version: string, o: Env) =>
      run(async (store) => print(policyDetail(await row(store, o.environment, version)))),
    );
  policy
    .command('import')
    .description('store a policy document (JSON file, - for standard input) as a candidate')
    .argument('<file>')
    .addOption(environmentOption())
    .action((file: string, o: Env) =>
      run(async (store) => {
        let doc: unknown;
        try {
          doc = JSON.parse(readFileSync(file === '-' ? 0 : file, 'utf8'));
        } catch (err) {
          throw usageError(`cannot read ${file}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
        }
        let valid: Policy;
        try {
          valid = validatePolicy(doc, file);
        } catch (err) {
          throw usageError((err as Error).message);
        }
        print(
          policyDetail(
            await insertPolicy(store.db, o.environment, { policy: valid, source: 'upload', createdBy: 'cli' }),
          ),
        );
      }),
    );
  policy
    .command('export')
    .description("print a version's policy document (JSON), e.g. to edit and import")
    .argument('<version>')
    .addOption(environmentOption())
    .action((version: string, o: Env) =>
      run(async (store) => print(parseDocument(await row(store, o.environment, version)))),
    );
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
  policy
    .command('activate')
    .description(
      'make a version the active policy on every instance (the previous one is retired); asks first when the share flagged high+ moves beyond the limits',
    )
    .argument('<version>')
    .option('--yes', 'activate even when the operating point moves beyond the limits, without asking')
    .addOption(environmentOption())
    .action((version: string, o: Env & { yes?: boolean }) =>
      run(async (store) => {
        const next = await row(store, o.environment, version);
        const current = await activeRow(store.db, o.environment);
        if (current && current.version !== next.version && o.yes !== true) {
          const move = await activationMove(store.db, o.environment, parseDocument(current), parseDocument(next));
          if (move.exceeds && !(await confirm(describeMove(move))))
            throw failure(`not activated: ${describeMove(move)}; pass --yes to activate it`);
        }
        print(policyRecord(await activatePolicy(store, o.environment, version)));
      }),
    );
  policy
    .command('shadow')
    .description('score every request with this version too, stored beside the live score; --off ends shadow mode')
    .argument('[version]')
    .option('--off', 'end shadow mode')
    .addOption(environmentOption())
    .action((version: string | undefined, o: Env & { off?: boolean }) =>
      run(async (store) => {
        if (o.off) {
          const previous = await clearShadow(store, o.environment);
          process.stdout.write(previous ? `shadow mode ended (was ${previous})\n` : 'no shadow policy was set\n');
          return;
        }
        if (!version) throw usageError('name a version, or --off');
        print(policyRecord(await shadowPolicy(store, o.environment, version)));
      }),
    );
  policy
    .command('report')
    .description("write a fitted version's report as a self-contained HTML page")
    .argument('<version>')
    .requiredOption('--out <file>', 'where to write the HTML')
    .addOption(environmentOption())
    .action((version: string, o: Env & { out: string }) =>
      run(async (store) => {
        const r = await row(store, o.environment, version);
        if (!r.report) throw failure(`policy ${version} has no report: only fitted policies do`);
        const { reportHtml } = await import('./report-html.ts');
        writeFileSync(o.out, await reportHtml(policyRecord(r), JSON.parse(r.report) as never));
        process.stdout.write(`report of ${version} written to ${o.out}\n`);
      }),
    );
}
