// The `vouch` command: serve, migrate, clients, signing-keys, events import.
import { parseArgs } from 'node:util';
import { availableParallelism } from 'node:os';
import { ConfigError, loadConfig, type Config } from './config/env.ts';
import { openStore } from './store/db.ts';
import { createClient, deactivateClient, listClients } from './auth/clients.ts';
import { isRole, isScope } from './auth/principal.ts';
import { rotateSigningKey } from './auth/signing-keys.ts';
import { resolveKeyEncryption } from './auth/kek.ts';
import { RevocationFeed } from './auth/revocation.ts';

const USAGE = `usage: vouch <command>
  serve [--workers N]                     start the HTTP service (default: one worker per core)
  migrate                                 apply database migrations
  clients create --name N --role R --scopes a,b
  clients list
  clients deactivate CLIENT_ID
  signing-keys rotate
  events import FILE.ndjson`;

class UsageError extends Error {}

async function withStore<T>(config: Config, fn: (store: ReturnType<typeof openStore>) => Promise<T>): Promise<T> {
  const store = openStore(config.databaseUrl);
  try {
    await store.migrate();
    return await fn(store);
  } finally {
    await store.close();
  }
}

async function clients(config: Config, args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub === 'create') {
    const { values } = parseArgs({ args: rest, options: { name: { type: 'string' }, role: { type: 'string' }, scopes: { type: 'string' } } });
    const scopes = (values.scopes ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    if (!values.name || !values.role || scopes.length === 0) throw new UsageError('clients create needs --name, --role and --scopes');
    if (!isRole(values.role)) throw new UsageError(`unknown role "${values.role}" (service, operator, admin)`);
    const unknown = scopes.filter((s) => !isScope(s));
    if (unknown.length > 0) throw new UsageError(`unknown scope(s): ${unknown.join(', ')}`);
    const role = values.role;
    await withStore(config, async (store) => {
      const { client, secret } = await createClient(store.db, { name: values.name!, role, scopes });
      process.stdout.write(`client_id=${client.client_id}\nclient_secret=${secret}\n# the secret is shown once; store it now\n`);
    });
  } else if (sub === 'list') {
    await withStore(config, async (store) => {
      for (const c of await listClients(store.db)) {
        process.stdout.write(`${c.client_id}\t${c.status}\t${c.role}\t${c.scopes.join(',')}\t${c.name}\n`);
      }
    });
  } else if (sub === 'deactivate') {
    const id = rest[0];
    if (!id) throw new UsageError('clients deactivate needs a CLIENT_ID');
    await withStore(config, async (store) => {
      const feed = new RevocationFeed(store);
      const client = await deactivateClient(store.db, feed, id);
      if (!client) throw new UsageError(`no client ${id}`);
      process.stdout.write(`${client.client_id} deactivated\n`);
    });
  } else {
    throw new UsageError(USAGE);
  }
}

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const config = loadConfig();
  switch (command) {
    case 'serve':
    case undefined: {
      const { values } = parseArgs({ args: rest, options: { workers: { type: 'string' } } });
      const workers = values.workers === undefined ? (config.workers ?? availableParallelism()) : Number(values.workers);
      if (!Number.isInteger(workers) || workers < 1 || workers > 256) throw new UsageError('--workers must be an integer from 1 to 256');
      const { default: cluster } = await import('node:cluster');
      if (workers > 1 && cluster.isPrimary) await (await import('./cluster.ts')).servePrimary(config, workers);
      else await (await import('./server.ts')).serve(config);
      return;
    }
    case 'migrate':
      await withStore(config, async () => {
        process.stdout.write('migrations applied\n');
      });
      return;
    case 'clients':
      return clients(config, rest);
    case 'signing-keys':
      if (rest[0] !== 'rotate') throw new UsageError(USAGE);
      await withStore(config, async (store) => {
        process.stdout.write(`new signing key ${await rotateSigningKey(store.db, resolveKeyEncryption(config, store))}\n`);
      });
      return;
    case 'events': {
      if (rest[0] !== 'import' || !rest[1]) throw new UsageError(USAGE);
      const { importEvents } = await import('./trust/import.ts');
      await withStore(config, (store) => importEvents(store, rest[1]!, config));
      return;
    }
    default:
      throw new UsageError(USAGE);
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof UsageError) {
    process.stderr.write(`vouch: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`vouch: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
