// The `vouch` command: serve, migrate, clients, signing-keys, events import. Parsing is
// commander's: `--help` on any command prints its usage and runs nothing; configuration is read
// only once a command actually runs, so help works whatever the environment holds.
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { ConfigError, loadConfig, type Config } from './config/env.ts';
import { openStore, type Store } from './store/db.ts';
import { createClient, deactivateClient, listClients } from './auth/clients.ts';
import { ENVIRONMENTS, ROLES, SCOPES, isRole, isScope, type Environment } from './auth/principal.ts';
import { rotateSigningKey } from './auth/signing-keys.ts';
import { resolveKeyEncryption } from './auth/kek.ts';
import { RevocationFeed } from './auth/revocation.ts';
import { lineLog } from './auth/events.ts';
import { registerPolicyCommands } from './policies/cli.ts';
import { registerLabelCommands } from './audit/cli.ts';

/** Audit lines of CLI actions go to standard error: standard output is the command's result. */
const cliLog = (config: Config) => lineLog(config.logLevel, process.stderr);

/** An input the command cannot act on: exit status 2 and one line, like a bad environment. */
export class UsageError extends Error {}
/** The command ran but did not fully succeed (e.g. an import with rejected lines): exit status 1. */
export class PartialFailure extends Error {}

function packageVersion(): string {
  // src/cli.ts and dist/cli.js both sit one level below package.json.
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

async function withStore<T>(config: Config, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = openStore(config.databaseUrl, { sqliteSynchronous: config.sqliteSynchronous });
  try {
    await store.migrate();
    return await fn(store);
  } finally {
    await store.close();
  }
}

function workerCount(raw: string): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > 256) throw new InvalidArgumentError('must be an integer from 1 to 256');
  return n;
}

function scopeList(raw: string): string[] {
  const scopes = raw.split(',').map((s) => s.trim()).filter(Boolean);
  if (scopes.length === 0) throw new InvalidArgumentError('needs at least one scope');
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length > 0) throw new InvalidArgumentError(`unknown scope(s): ${unknown.join(', ')} (known: ${SCOPES.join(', ')})`);
  return scopes;
}

function role(raw: string): string {
  if (!isRole(raw)) throw new InvalidArgumentError(`unknown role "${raw}" (${ROLES.join(', ')})`);
  return raw;
}

/**
 * What a first-time user needs on the terminal: where the API reference is and, while the store
 * has no client, how to get a credential. On standard error, apart from the JSON logs.
 */
async function startupHints(config: Config): Promise<void> {
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const base = `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
  const lines = [`vouch: serving on ${base} (API reference: ${base}/docs)`];
  const hasClient = config.bootstrapClientId !== undefined || (await withStore(config, async (store) => (await listClients(store.db)).length > 0));
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
  if (cluster.isPrimary) await startupHints(config);
  if (workers > 1 && cluster.isPrimary) await (await import('./cluster.ts')).servePrimary(config, workers);
  else await (await import('./server.ts')).serve(config);
}

export function buildProgram(): Command {
  const program = new Command('vouch')
    .description('Counterparty-risk scoring and dispute analysis for P2P marketplaces')
    .version(packageVersion(), '-V, --version', 'print the version')
    .showHelpAfterError('(vouch --help, or vouch <command> --help, prints usage)')
    .configureOutput({ outputError: (text, write) => write(`vouch: ${text.replace(/^error: /, '')}`) })
    .exitOverride();

  program
    .command('serve')
    .description('start the HTTP service (the same as npm start)')
    .addOption(new Option('--workers <n>', 'worker processes sharing the port (default: VOUCH_WORKERS or one per core)').argParser(workerCount))
    .action(serveCommand);

  program
    .command('migrate')
    .description('apply database migrations (they also run at start)')
    .action(async () => {
      await withStore(loadConfig(), async () => {
        process.stdout.write('migrations applied\n');
      });
    });

  const clients = program.command('clients').description('API clients (credentials for the token endpoint)');
  clients
    .command('create')
    .description('create a client; prints client_id and client_secret once')
    .requiredOption('--name <name>', 'a name for people')
    .requiredOption('--role <role>', `one of ${ROLES.join(', ')}`, role)
    .requiredOption('--scopes <a,b>', 'comma-separated scopes', scopeList)
    .addOption(new Option('--environment <environment>', 'the data its tokens see: live, or test (test mode)').choices(ENVIRONMENTS).default('live'))
    .action(async (options: { name: string; role: string; scopes: string[]; environment: Environment }) => {
      const config = loadConfig();
      await withStore(config, async (store) => {
        const { client, secret } = await createClient(store.db, { name: options.name, role: options.role as never, scopes: options.scopes, environment: options.environment }, cliLog(config));
        process.stdout.write(`client_id=${client.client_id}\nclient_secret=${secret}\n# the secret is shown once; store it now\n`);
      });
    });
  clients
    .command('list')
    .description('list clients: id, status, environment, role, scopes, name')
    .action(async () => {
      await withStore(loadConfig(), async (store) => {
        for (const c of await listClients(store.db)) {
          process.stdout.write(`${c.client_id}\t${c.status}\t${c.environment}\t${c.role}\t${c.scopes.join(',')}\t${c.name}\n`);
        }
      });
    });
  clients
    .command('deactivate')
    .description("deactivate a client: its tokens and keys stop working at once")
    .argument('<client_id>')
    .action(async (id: string) => {
      const config = loadConfig();
      await withStore(config, async (store) => {
        const client = await deactivateClient(store.db, new RevocationFeed(store), id, cliLog(config));
        if (!client) throw new UsageError(`no client ${id}`);
        process.stdout.write(`${client.client_id} deactivated\n`);
      });
    });

  program
    .command('signing-keys')
    .description('token signing keys')
    .command('rotate')
    .description('make a new Ed25519 signing key; old public keys stay published until their tokens expire')
    .action(async () => {
      const config = loadConfig();
      await withStore(config, async (store) => {
        process.stdout.write(`new signing key ${await rotateSigningKey(store.db, resolveKeyEncryption(config, store), cliLog(config))}\n`);
      });
    });

  program
    .command('events')
    .description('trust history')
    .command('import')
    .description('load events from NDJSON (one event per line; - reads standard input); exit status 1 if any line was rejected')
    .argument('<file>', 'an .ndjson file, or - for standard input')
    .addOption(new Option('--environment <environment>', 'the data the events belong to: live, or test (test mode)').choices(ENVIRONMENTS).default('live'))
    .action(async (file: string, options: { environment: Environment }) => {
      const config = loadConfig();
      const { importEvents } = await import('./trust/import.ts');
      const summary = await withStore(config, (store) => importEvents(store, file, config, options.environment));
      if (summary.rejectedCount > 0) throw new PartialFailure(`${summary.rejectedCount} line(s) rejected`);
    });

  registerPolicyCommands(program, { withStore, usageError: (message) => new UsageError(message) });
  registerLabelCommands(program, { usageError: (message) => new UsageError(message), partialFailure: (message) => new PartialFailure(message) });

  return program;
}

export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  // `vouch` alone is a request for help, not an error.
  if (argv.length === 0) {
    program.outputHelp();
    return;
  }
  await program.parseAsync(argv, { from: 'user' });
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof CommanderError) {
    // Help and version print and exit 0; commander has already written its own one-line error.
    process.exit(err.exitCode === 0 ? 0 : 2);
  }
  if (err instanceof ConfigError || err instanceof UsageError) {
    process.stderr.write(`vouch: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`vouch: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
