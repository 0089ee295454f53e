// The `vouch` command's parser: every command, its options and its help. src/cli.ts runs it.
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Command, InvalidArgumentError, Option } from 'commander';
import '../actor-directory.ts';
import { loadConfig, type Config } from '../config/env.ts';
import { listClients } from '../auth/clients.ts';
import { SCOPES, ENVIRONMENTS, type Environment } from '../lib/principal.ts';
import { rotateSigningKey } from '../auth/signing-keys.ts';
import { resolveKeyEncryption } from '../auth/kek.ts';
import { registerPolicyCommands } from '../policies/cli.ts';
import { registerNetworkCommands } from '../network/cli.ts';
import { registerLabelCommands } from '../audit/cli.ts';
import { registerReviewCommands } from '../reviews/cli.ts';
import { registerAuditLogCommands } from '../audit-log/cli.ts';
import { registerRuleCommands } from '../rules/cli.ts';
import { registerClientCommands } from './clients.ts';
import { registerUserCommands } from './users.ts';
import { CommandFailure, EXIT_CODES_HELP, PartialFailure, UsageError, cliLog, withStore } from './support.ts';

function packageVersion(): string {
  // src/cli/program.ts and dist/cli/program.js both sit two levels below package.json.
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

function workerCount(raw: string): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > 256) throw new InvalidArgumentError('must be an integer from 1 to 256');
  return n;
}

/**
 * What a first-time user needs on the terminal: where the API reference is and, while the store
 * has no client, how to get a credential. On standard error, apart from the JSON logs.
 */
async function startupHints(config: Config): Promise<void> {
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const base = `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
  const lines = [`vouch: serving on ${base} (API reference: ${base}/docs)`];
  const hasClient =
    config.bootstrapClientId !== undefined ||
    (await withStore(config, async (store) => (await listClients(store.db)).length > 0));
  if (!hasClient) {
    lines.push(
      'vouch: no API client exists yet. Create one, then exchange it for a token at POST /api/v1/auth/token:',
      `vouch:   npx vouch clients create --name ops --role admin --scopes ${SCOPES.join(',')}`,
      'vouch: or start with VOUCH_BOOTSTRAP_CLIENT_ID and VOUCH_BOOTSTRAP_CLIENT_SECRET set.',
    );
  }
  process.stderr.write(`${lines.join('\n')}\n`);
}

async function serveCommand(options: { workers?: number }): Promise<void> {
  const config = loadConfig();
  const workers = options.workers ?? config.workers ?? availableParallelism();
  const { default: cluster } = await import('node:cluster');
  if (workers > 1 && cluster.isPrimary) await (await import('../cluster.ts')).servePrimary(config, workers);
  else await (await import('../server.ts')).serve(config);
  // Once the store, its key and (one process) the port are ready: a start that fails says only why.
  if (cluster.isPrimary) await startupHints(config);
}

export function buildProgram(): Command {
  const program = new Command('vouch')
    .description('Counterparty-risk scoring and dispute analysis for P2P marketplaces')
    .version(packageVersion(), '-V, --version', 'print the version')
    .showHelpAfterError('(vouch --help, or vouch <command> --help, prints usage)')
    .configureOutput({ outputError: (text, write) => write(`vouch: ${text.replace(/^error: /, '')}`) })
    .addHelpText('after', EXIT_CODES_HELP)
    .exitOverride();

  program
    .command('serve')
    .description('start the HTTP service (the same as npm start)')
    .addOption(
      new Option(
        '--workers <n>',
        'worker processes sharing the port (default: VOUCH_WORKERS or one per core)',
      ).argParser(workerCount),
    )
    .action(serveCommand);

  program
    .command('migrate')
    .description('apply database migrations (they also run at start)')
    .action(async () => {
      await withStore(loadConfig(), async () => {
        process.stdout.write('migrations applied\n');
      });
    });

  registerClientCommands(program);
  registerUserCommands(program);

  program
    .command('signing-keys')
    .description('token signing keys')
    .command('rotate')
    .description('make a new Ed25519 signing key; old public keys stay published until their tokens expire')
    .action(async () => {
      const config = loadConfig();
      await withStore(config, async (store) => {
        process.stdout.write(
          `new signing key ${await rotateSigningKey(store.db, resolveKeyEncryption(config, store), cliLog(config))}\n`,
        );
      });
    });

  program
    .command('events')
    .description('trust history')
    .command('import')
    .description(
      'load events from NDJSON (one event per line; - reads standard input); exit status 1 if any line was rejected',
    )
    .argument('<file>', 'an .ndjson file, or - for standard input')
    .addOption(
      new Option('--environment <environment>', 'the data the events belong to: live, or test (test mode)')
        .choices(ENVIRONMENTS)
        .default('live'),
    )
    .action(async (file: string, options: { environment: Environment }) => {
      const config = loadConfig();
      const { importEvents } = await import('../trust/import.ts');
      const summary = await withStore(config, (store) => importEvents(store, file, config, options.environment));
      if (summary.rejectedCount > 0) throw new PartialFailure(`${summary.rejectedCount} line(s) rejected`);
    });

  registerPolicyCommands(program, {
    withStore,
    usageError: (message) => new UsageError(message),
    failure: (message) => new CommandFailure(message),
  });
  registerNetworkCommands(program, { withStore, usageError: (message) => new UsageError(message) });
  registerLabelCommands(program, {
    usageError: (message) => new UsageError(message),
    partialFailure: (message) => new PartialFailure(message),
  });
  registerReviewCommands(program, { withStore });
  registerAuditLogCommands(program, { withStore, failure: (message) => new CommandFailure(message) });
  registerRuleCommands(program, {
    withStore,
    usageError: (message) => new UsageError(message),
    partialFailure: (message) => new PartialFailure(message),
  });

  return program;
}
