// Starts one serving process: configuration, store, migrations, bootstrap admin, HTTP, and a
// graceful shutdown that lets in-flight requests finish.
import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';
import { ConfigError, type Config } from './config/env.ts';
import { openStore, type Store } from './store/db.ts';
import { buildApp } from './app.ts';
import { createClient, findClient } from './auth/clients.ts';
import { SCOPES } from './auth/principal.ts';
import { loadPolicy } from './config/policy.ts';

export async function ensureBootstrapAdmin(store: Store, config: Config): Promise<boolean> {
  const { bootstrapClientId: id, bootstrapClientSecret: secret } = config;
  if (!id || !secret) return false;
  if (await findClient(store.db, id)) return false;
  try {
    await createClient(store.db, { id, secret, name: 'bootstrap admin', role: 'admin', scopes: [...SCOPES] });
    return true;
  } catch (err) {
    // Another worker or instance created it first.
    if (await findClient(store.db, id)) return false;
    throw err;
  }
}

export async function prepareStore(config: Config): Promise<Store> {
  const store = openStore(config.databaseUrl);
  await store.migrate();
  await ensureBootstrapAdmin(store, config);
  return store;
}

export async function serve(config: Config): Promise<FastifyInstance> {
  let policy;
  try {
    policy = loadPolicy(config.policyFile);
  } catch (err) {
    throw new ConfigError(`VOUCH_POLICY_FILE: ${err instanceof Error ? err.message : String(err)}`);
  }
  const store = await prepareStore(config);
  const app = await buildApp({ config, store, policy });
  app.addHook('onClose', async () => store.close());
  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an error');
    else app.log.info({ signal }, 'shutting down; finishing in-flight requests');
    await app.close();
  });
  await app.listen({ port: config.port, host: config.host });
  return app;
}
