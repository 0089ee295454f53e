// The network (docs/network.md): its identity, the checks of the peer protocol at /network/v1,
// and the scheduled sync (startNetwork); its routes, the peer protocol and the admin API at
// /api/v1/network (networkRoutes, listed in src/routes.ts). Off until an admin adds a peer: with
// no peer, a sync contacts nobody and the peer endpoints refuse every caller.
import type { FastifyInstance } from 'fastify';
import type { Store } from '../store/db.ts';
import type { KeyEncryption } from '../lib/envelope.ts';
import type { BackgroundServices } from '../lib/background.ts';
import type { Config } from '../config/env.ts';
import { loadIdentity } from './identity.ts';
import { announceNetworkChange, recordName, takeSyncLease } from './publication-repository.ts';
import { networkMetrics } from './metrics.ts';
import { networkDb } from './tables.ts';
import { syncAll, type PeerSyncResult, type SyncDeps } from './resolver.ts';
import { CALL_DEADLINE_MS, syncLimits } from './limits.ts';
import { refreshPublished } from './publisher.ts';
import { pruneBudgets } from './budget-repository.ts';
import { listPeers, pruneNonces } from './peer-repository.ts';
import { peerHooks, type PeerHooks } from './peer-auth.ts';
import { peerRoutes } from './peer-routes.ts';
import { networkAdminRoutes } from './admin-routes.ts';
import type { Metrics } from '../http/observability.ts';
import type { RouteDefinition } from '../http/route.ts';
import type { UrlPolicy } from '../webhooks/ssrf.ts';
import type { NetworkIdentity } from './identity.ts';
import type { NetworkMetrics } from './metrics.ts';
import type { NetworkDb } from './tables.ts';
import type { PendingIdentifiers } from './pending.ts';
import { countAllMatches, settleQueue } from './match-repository.ts';

export interface NetworkOptions {
  store: Store;
  encryption: KeyEncryption;
  config: Pick<Config, 'network' | 'publicUrl'>;
  /** per-call timeout towards peers (tests shorten it) */
  peerTimeoutMs?: number;
  /**
   * called when what the network says may have changed (a sync ran, a peer was changed or removed): cached scores are
   * stale
   */
  onChanged?: () => void;
  metrics: Metrics;
  /** identifiers named only in score requests, for the sync to resolve */
  pending: PendingIdentifiers;
}

/** What the network's routes need, made once at start. */
export interface NetworkServices {
  db: NetworkDb;
  refresh: () => Promise<void>;
  commonEntityIds: boolean;
  identity: NetworkIdentity;
  metrics: NetworkMetrics;
  hooks: PeerHooks;
  urlPolicy: UrlPolicy;
  syncNow: () => Promise<PeerSyncResult[]>;
  name: string;
  publicUrl: string | undefined;
  onChanged: () => Promise<void>;
}

/** Runs one sync at a time in this process; a sync asked for while one runs starts after it. */
function serialised(run: () => Promise<PeerSyncResult[]>): () => Promise<PeerSyncResult[]> {
  let tail: Promise<unknown> = Promise.resolve();
  return () => {
    const next = tail.then(run, run);
    tail = next.catch(() => undefined);
    return next;
  };
}

export async function startNetwork(
  app: FastifyInstance,
  background: BackgroundServices,
  {
    store,
    encryption,
    config,
    peerTimeoutMs = CALL_DEADLINE_MS,
    onChanged = () => {},
    metrics: appMetrics,
    pending,
  }: NetworkOptions,
): Promise<NetworkServices> {
  const db = networkDb(store.db);
  const identity = await loadIdentity(db, encryption);
  // The descriptor's name, where `vouch network status` (another process, maybe another environment) reads it.
  await recordName(db, config.network.name);
  const metrics = networkMetrics(appMetrics);
  pending.onDropped = (count) => metrics.pendingDropped(count);
  const hooks = peerHooks(
    db,
    identity,
    (reason) => metrics.refused(reason),
    (route, status) => metrics.served(route, status),
  );
  const urlPolicy = {
    allowPrivate: config.network.allowPrivate,
    setting: 'VOUCH_NETWORK_ALLOW_PRIVATE',
  } satisfies UrlPolicy;
  const commonEntityIds = config.network.commonEntityIds;
  const deps: SyncDeps = {
    db,
    identity,
    urlPolicy,
    timeoutMs: peerTimeoutMs,
    metrics,
    commonEntityIds,
    ...syncLimits(config.network),
    log: app.log,
  };
  // One refresh of the published set at a time in this process; callers share it, and its failure is logged, not
  // thrown.
  let refreshing: Promise<void> | undefined;
  const refresh = () =>
    (refreshing ??= refreshPublished(store, identity, { entityIds: commonEntityIds })
      .then((r) => metrics.setPublished(r.published))
      .catch((err: unknown) =>
        app.log.warn(
          { event: 'network_publish_failed', err },
          'refreshing the published set failed; it is served as it was',
        ),
      )
      .finally(() => (refreshing = undefined)));
  // What scores read from the network may differ: the version in the store makes every instance's
  // cached scores stale (src/trust/profile.ts, state), and this one's are dropped at once.
  const changed = async () => {
    await announceNetworkChange(db);
    store.changes.localWrite();
    onChanged();
  };
  const syncNow = serialised(async () => {
    await pending.flush();
    const results = await syncAll(deps);
    await settleQueue(db);
    metrics.setMatched(await countAllMatches(db));
    await changed();
    return results;
  });

  // The scheduled sync: one process of the deployment at a time holds it (a lease in the store).
  const periodMs = config.network.syncSeconds * 1000;
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    try {
      const now = Date.now();
      if (!(await takeSyncLease(db, now, now + Math.floor(periodMs * 0.9)))) return;
      await pruneNonces(db);
      await pruneBudgets(db);
      // The published set is kept up to date between pulls too, while the deployment is in a network.
      if ((await listPeers(db, 'active')).length > 0) await refresh();
      await syncNow();
    } catch (err) {
      app.log.warn({ event: 'network_sync_failed', err }, 'scheduled network sync failed');
    }
  };
  background.add({
    name: 'network sync',
    start: () => {
      timer = setInterval(() => void tick(), periodMs);
      timer.unref();
    },
    stop: () => {
      if (timer) clearInterval(timer);
      pending.stop();
    },
  });
  return {
    db,
    refresh,
    commonEntityIds,
    identity,
    metrics,
    hooks,
    urlPolicy,
    syncNow,
    name: config.network.name,
    publicUrl: config.publicUrl,
    onChanged: changed,
  };
}

export function networkRoutes(n: NetworkServices): RouteDefinition[] {
  return [
    ...peerRoutes({
      db: n.db,
      refresh: n.refresh,
      commonEntityIds: n.commonEntityIds,
      identity: n.identity,
      metrics: n.metrics,
      hooks: n.hooks,
      name: n.name,
      publicUrl: n.publicUrl,
    }),
    ...networkAdminRoutes({
      db: n.db,
      identity: n.identity,
      urlPolicy: n.urlPolicy,
      syncNow: n.syncNow,
      name: n.name,
      onChanged: n.onChanged,
    }),
  ];
}
