// Starts one serving process: configuration, store, migrations, bootstrap admin, HTTP, and a
// graceful shutdown that lets in-flight requests finish.
import cluster from 'node:cluster';
import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';
import { type Config } from './config/env.ts';
import { ConfigError } from './config/env-values.ts';
import { openStore, type Store, type StoreOptions } from './store/db.ts';
import { advisoryXactLock } from './store/locks.ts';
import { rewriteWithoutDeletedBytes } from './store/secure-delete.ts';
import { HostWriter, primaryChannel } from './audit/host-writer.ts';
import { remoteIngestion } from './trust/ingest-host.ts';
import { ingestThrough } from './trust/ingest.ts';
import { buildApp } from './app.ts';
import { createClient, findClient } from './auth/clients.ts';
import { setClientScopes } from './auth/client-repository.ts';
import { SCOPES } from './lib/principal.ts';
import { createSigningKey, sealOrReplaceSigningKeys } from './auth/signing-keys.ts';
import { currentSigningKid } from './auth/signing-key-repository.ts';
import { resolveKeyEncryption } from './auth/kek.ts';
import { type KeyEncryption } from './lib/envelope.ts';
import { lineLog, silentLog, type AuthLog } from './auth/events.ts';
import { loadPolicy } from './model/policy-document.ts';
import { ensurePolicies } from './policies/repository.ts';

/** The signals that stop a serving process gracefully. */
export const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const;
/** What a cluster primary sends a worker to make it drain and exit. */
export const SHUTDOWN_MESSAGE = 'vouch:shutdown';
/** What a worker that cannot serve at all (its port is taken) tells its primary before it exits. */
export const STARTUP_FAILED_MESSAGE = 'vouch:startup-failed';

/** One line for an operator: the listen errors anyone can cause, named plainly. */
function listenFailure(err: unknown, config: Config): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') return `port ${config.port} on ${config.host} is already in use`;
  if (code === 'EACCES') return `no permission to listen on port ${config.port} on ${config.host}`;
  if (code === 'EADDRNOTAVAIL') return `${config.host} is not an address of this host`;
  return `cannot listen on ${config.host}:${config.port}: ${err instanceof Error ? err.message : String(err)}`;
}

export async function ensureBootstrapAdmin(store: Store, config: Config, log?: AuthLog): Promise<boolean> {
  const { bootstrapClientId: id, bootstrapClientSecret: secret } = config;
  if (!id || !secret) return false;
  const existing = await findClient(store.db, id);
  if (existing) {
    // The bootstrap admin holds every scope, including scopes added by an upgrade since it was made.
    const missing = SCOPES.filter((scope) => !existing.scopes.includes(scope));
    if (existing.role === 'admin' && existing.status === 'active' && missing.length > 0) {
      await setClientScopes(store.db, id, [...existing.scopes, ...missing].join(' '));
      log?.info(
        { event: 'bootstrap_admin_scopes_added', client_id: id, scopes: missing.join(' ') },
        'bootstrap admin given the scopes added since it was created',
      );
    }
    return false;
  }
  try {
    await createClient(store.db, { id, secret, name: 'bootstrap admin', role: 'admin', scopes: [...SCOPES] });
    log?.info({ event: 'bootstrap_admin_created', client_id: id }, 'bootstrap admin client created');
    return true;
  } catch (err) {
    // Another worker or instance created it first.
    if (await findClient(store.db, id)) return false;
    throw err;
  }
}

/** An arbitrary constant: the advisory lock that serializes instances starting together (store/locks.ts). */
const STARTUP_LOCK = 0x766f7563; // "vouc"

/**
 * The first signing key, made once however many instances start at the same moment. Left to
 * each instance's KeyRing.init, two instances starting together could each make one and sign with
 * it, and a token issued by one would be refused by the other until it next reloads its keys.
 */
export async function ensureSigningKey(store: Store, enc: KeyEncryption, log: AuthLog = silentLog): Promise<void> {
  const replacedClearText = await store.db.transaction().execute(async (trx) => {
    await advisoryXactLock(store, trx, STARTUP_LOCK);
    // Clear-text keys of an older store are sealed and replaced, keys under
    // VOUCH_SECRET_KEY_PREVIOUS resealed; a store sealed under another KEK stops the start here.
    const replaced = await sealOrReplaceSigningKeys(trx, enc, log);
    const current = await currentSigningKid(trx);
    if (!current) await createSigningKey(trx, enc);
    return replaced;
  });
  // Rewrite the file so the clear-text bytes survive neither in free pages nor in the WAL.
  if (replacedClearText) rewriteWithoutDeletedBytes(store);
}

/**
 * Set by the primary in its workers' environment when it is the host's SQLite writer (cluster.ts,
 * audit/host-writer.ts).
 */
export const HOST_WRITER_ENV = 'VOUCH_HOST_WRITER';

/** `checkpoints`: who checkpoints SQLite (store/db.ts); the process that writes the decisions finishes them. */
export async function prepareStore(
  config: Config,
  log: AuthLog = lineLog(config.logLevel),
  checkpoints: StoreOptions['sqliteCheckpoints'] = 'writer',
): Promise<Store> {
  const store = openStore(config.databaseUrl, {
    sqliteSynchronous: config.sqliteSynchronous,
    sqliteWalLimitBytes: config.sqliteWalLimitBytes,
    sqliteCheckpoints: checkpoints,
  });
  try {
    await store.migrate();
    await ensureSigningKey(store, resolveKeyEncryption(config, store), log);
    await ensureBootstrapAdmin(store, config, log);
    // The built-in and configured policies, stored and activated once, before any worker starts.
    await ensurePolicies(store, loadPolicy(config.policyFile));
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}

export async function serve(config: Config): Promise<FastifyInstance> {
  let policy;
  try {
    policy = loadPolicy(config.policyFile);
  } catch (err) {
    throw new ConfigError(`VOUCH_POLICY_FILE: ${err instanceof Error ? err.message : String(err)}`);
  }
  // A worker of a primary that writes the host's decisions (SQLite) neither writes them nor checkpoints.
  const hostWriter =
    cluster.isWorker && process.env[HOST_WRITER_ENV] === '1' ? new HostWriter(primaryChannel()) : undefined;
  const store = await prepareStore(config, undefined, hostWriter ? 'none' : 'writer');
  if (hostWriter)
    ingestThrough(
      store,
      remoteIngestion((kind, payload) => hostWriter.call(kind, payload)),
    );
  const app = await buildApp({
    config,
    store,
    policy,
    ...(hostWriter ? { decisionCommit: hostWriter.decisionCommit() } : {}),
  });
  app.addHook('onClose', async () => store.close());
  // While draining, responses close their connection: a keep-alive connection whose request
  // finishes during the drain would otherwise stay open for the keep-alive timeout
  // (VOUCH_KEEP_ALIVE_TIMEOUT_MS) and hold the close up, past close-with-grace's delay if that is
  // configured longer (exit code 1, onClose hooks never run).
  let draining = false;
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (draining) reply.header('connection', 'close');
    done(null, payload);
  });
  const graceful = closeWithGrace(
    { delay: 10_000, ...(cluster.isWorker ? { skip: [...STOP_SIGNALS] } : {}) },
    async ({ signal, err, manual }) => {
      if (err) app.log.error({ err }, 'shutting down after an error');
      else
        app.log.info(
          { signal: signal ?? (manual ? 'primary' : undefined) },
          'shutting down; finishing in-flight requests',
        );
      draining = true;
      // server.close() closes the connections idle at that moment only; these become idle later.
      const reaper = setInterval(() => app.server.closeIdleConnections(), 50);
      try {
        await app.close();
      } finally {
        clearInterval(reaper);
      }
    },
  );
  if (cluster.isWorker) {
    // A worker is told to stop by its primary and, when the whole process group is signalled
    // (Ctrl-C in a terminal, systemd's default KillMode), by the same signal directly: the second
    // notice must not cut the drain short (close-with-grace exits at once on a second signal).
    let stopping = false;
    const stop = () => {
      if (stopping) return;
      stopping = true;
      void graceful.close();
    };
    for (const signal of STOP_SIGNALS) process.on(signal, stop);
    process.on('message', (message) => {
      if (message === SHUTDOWN_MESSAGE) stop();
    });
  }
  try {
    // The app's background services start here (lib/background.ts): a failure to start them is
    // reported as itself, not as a failure to listen.
    await app.ready();
  } catch (err) {
    graceful.uninstall();
    await app.close().catch(() => {});
    throw err;
  }
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    const message = listenFailure(err, config);
    await app.close().catch(() => {});
    if (cluster.isWorker && process.send) {
      // The primary prints the line once and stops; every worker would fail the same way, and
      // restarting them would only fail again.
      await new Promise<void>((resolve) =>
        process.send!({ type: STARTUP_FAILED_MESSAGE, message }, undefined, undefined, () => resolve()),
      );
      process.exit(1);
    }
    throw new Error(message);
  }
  return app;
}
