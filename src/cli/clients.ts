// `vouch clients create|list|deactivate`: API clients, straight in the store. Standard output is
// the command's result only (the credentials, the table); audit lines follow cliLog's rule.
import { InvalidArgumentError, Option, type Command } from 'commander';
import { createClient, deactivateClient, listClients, type ClientRecord } from '../auth/clients.ts';
import { ENVIRONMENTS, ROLES, SCOPES, isRole, isScope, type Environment, type Role } from '../lib/principal.ts';
import { ChangeFeed } from '../store/change-feed.ts';
import { loadConfig } from '../config/env.ts';
import { CommandFailure, cliLog, withStore } from './support.ts';
import { auditorFor, cliActor, loggableText } from '../audit-log/auditor.ts';

function scopeList(raw: string): string[] {
  const scopes = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (scopes.length === 0) throw new InvalidArgumentError('needs at least one scope');
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length > 0)
    throw new InvalidArgumentError(`unknown scope(s): ${unknown.join(', ')} (known: ${SCOPES.join(', ')})`);
  return scopes;
}

function role(raw: string): Role {
  if (!isRole(raw)) throw new InvalidArgumentError(`unknown role "${raw}" (${ROLES.join(', ')})`);
  return raw;
}

/** A name is shown in tables and the console: printable, one line, not empty. */
function clientName(raw: string): string {
  // eslint-disable-next-line no-control-regex
  if (raw.trim() === '' || raw.length > 200 || /[\u0000-\u001f\u007f-\u009f]/.test(raw)) {
    throw new InvalidArgumentError('must be 1 to 200 printable characters on one line');
  }
  return raw;
}

/** A cell as a terminal should show it: control characters (from rows stored before names were checked) escaped. */
const printable = (text: string) =>
  // eslint-disable-next-line no-control-regex
  text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

const COLUMNS: [string, (c: ClientRecord) => string][] = [
  ['CLIENT_ID', (c) => c.client_id],
  ['STATUS', (c) => c.status],
  ['ENVIRONMENT', (c) => c.environment],
  ['ROLE', (c) => c.role],
  ['SCOPES', (c) => c.scopes.join(',')],
  ['NAME', (c) => printable(c.name)],
];

/** A header and one aligned row per client; the last column (the name) is not padded. */
function clientTable(clients: readonly ClientRecord[]): string {
  const rows = [COLUMNS.map(([title]) => title), ...clients.map((c) => COLUMNS.map(([, cell]) => cell(c)))];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return (
    rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n') +
    '\n'
  );
}

export function registerClientCommands(program: Command): void {
  const clients = program.command('clients').description('API clients (credentials for the token endpoint)');
  clients
    .command('create')
    .description('create a client; prints client_id and client_secret once (nothing else on standard output)')
    .requiredOption('--name <name>', 'a name for people', clientName)
    .requiredOption('--role <role>', `one of ${ROLES.join(', ')}`, role)
    .requiredOption('--scopes <a,b>', 'comma-separated scopes', scopeList)
    .addOption(
      new Option('--environment <environment>', 'the data its tokens see: live, or test (test mode)')
        .choices(ENVIRONMENTS)
        .default('live'),
    )
    .action(async (options: { name: string; role: Role; scopes: string[]; environment: Environment }) => {
      const config = loadConfig();
      await withStore(config, async (store) => {
        // The client and its audit entry (never the secret) commit together.
        const { client, secret } = await store.db.transaction().execute(async (trx) => {
          const created = await createClient(
            trx,
            { name: options.name, role: options.role, scopes: options.scopes, environment: options.environment },
            cliLog(config),
          );
          const { client_id, name, role, scopes, environment } = created.client;
          await auditorFor(
            store,
            environment,
            cliActor(),
          )(trx, {
            action: 'client.created',
            target: `client:${client_id}`,
            after: { name: loggableText(name), role, scopes, environment },
          });
          return created;
        });
        process.stdout.write(
          `client_id=${client.client_id}\nclient_secret=${secret}\n# the secret is shown once; store it now\n`,
        );
      });
    });
  clients
    .command('list')
    .description('list clients: a table with a header, or --json for scripts')
    .option(
      '--json',
      'a JSON array of client records (client_id, name, role, scopes, status, environment, created_at, deactivated_at)',
    )
    .action(async (options: { json?: boolean }) => {
      await withStore(loadConfig(), async (store) => {
        const all = await listClients(store.db);
        process.stdout.write(options.json ? `${JSON.stringify(all, null, 2)}\n` : clientTable(all));
      });
    });
  clients
    .command('deactivate')
    .description(
      'deactivate a client: its tokens and keys stop working at once (exit status 1 if there is no such client)',
    )
    .argument('<client_id>')
    .action(async (id: string) => {
      const config = loadConfig();
      await withStore(config, async (store) => {
        const client = await deactivateClient(store.db, new ChangeFeed(store), id, cliLog(config), (trx, c) =>
          auditorFor(
            store,
            c.environment,
            cliActor(),
          )(trx, {
            action: 'client.deactivated',
            target: `client:${c.client_id}`,
            before: { status: 'active' },
            after: { status: 'inactive' },
          }),
        );
        if (!client) throw new CommandFailure(`no client ${printable(id)}`);
        process.stdout.write(`${client.client_id} deactivated\n`);
      });
    });
}
