// `vouch policy …` (docs/api.md, "Policies"): the policy versions in the store, from a terminal. Commands act
// on the store directly, as `vouch clients` does; an activation reaches running instances through
// the change feed, like one made over HTTP. Output is JSON (or tab-separated for `list`).
import { readFileSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { Environment } from '../lib/principal.ts';
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
import { policyDetail, policyRecord } from './route-support.ts';
import { namePolicy } from './policy-actors.ts';
import { activationMove } from './activation.ts';
import type { OperatingMove } from './operating.ts';
import { environmentOption, print, type Env } from './cli-options.ts';
import { registerJobCommands } from './cli-jobs.ts';
import { auditorFor, cliActor } from '../audit-log/auditor.ts';

/** A status change from the command line goes to the audit log as the host's operator's (docs/api.md, "Audit log"). */
const cliAudit = (store: Store, environment: Environment) => auditorFor(store, environment, cliActor());

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
    return namePolicy(store.db, found);
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
  registerJobCommands(policy, { run, row, usageError, failure });
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
        print(policyRecord(await activatePolicy(store, o.environment, version, cliAudit(store, o.environment))));
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
          const previous = await clearShadow(store, o.environment, cliAudit(store, o.environment));
          process.stdout.write(previous ? `shadow mode ended (was ${previous})\n` : 'no shadow policy was set\n');
          return;
        }
        if (!version) throw usageError('name a version, or --off');
        print(policyRecord(await shadowPolicy(store, o.environment, version, cliAudit(store, o.environment))));
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
