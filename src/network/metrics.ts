// vouch_network_* metrics: counts only, never identifiers, elements or tags.
import type { Metrics } from '../http/observability.ts';
import { Gauge, type Registry } from 'prom-client';

export interface NetworkMetrics {
  /** peer requests this deployment answered, by endpoint and status class */
  served(endpoint: string, status: number): void;
  /** signed requests refused, by reason (unsigned, unknown_peer, suspended, stale, bad_signature, replayed, budget) */
  refused(reason: string): void;
  /** elements evaluated for peers (served) and by peers for us (asked) */
  evaluations(direction: 'served' | 'asked', count: number): void;
  /** one sync with a peer: its outcome, and the flags pulled */
  synced(outcome: 'ok' | 'error', flagsPulled: number): void;
  /**
   * a peer's page held back: its set would pass the cap of flags held per peer, or grew faster than its history allows
   * (an alert)
   */
  flagsRefused(reason: 'cap' | 'growth'): void;
  /** a peer's evaluations in the last 24 hours against its budget; `alert` when this request took it past 80 % */
  budgetUsed(peerId: string, used: number, budget: number, alert: boolean): void;
  /** identifiers named only in score requests and dropped over their client's quota of queued ones */
  pendingDropped(count: number): void;
  /** entries this deployment publishes, and identifiers matched at peers */
  setPublished(count: number): void;
  setMatched(count: number): void;
}

function gauge(registry: Registry, name: string, help: string): Gauge {
  const existing = registry.getSingleMetric(name);
  return (existing as Gauge | undefined) ?? new Gauge({ name, help, registers: [registry] });
}

export function networkMetrics(metrics: Metrics): NetworkMetrics {
  const served = metrics.counter(
    'vouch_network_requests_total',
    'Peer requests answered, by endpoint and status class',
    ['endpoint', 'status'],
  );
  const refused = metrics.counter('vouch_network_refused_total', 'Peer requests refused, by reason', ['reason']);
  const evaluations = metrics.counter(
    'vouch_network_evaluations_total',
    'OPRF elements evaluated: served to peers, or asked of peers',
    ['direction'],
  );
  const syncs = metrics.counter('vouch_network_syncs_total', 'Syncs with a peer, by outcome', ['outcome']);
  const pulled = metrics.counter('vouch_network_flags_pulled_total', 'Flag entries pulled from peers');
  const refusedGrowth = metrics.counter(
    'vouch_network_peer_growth_refused_total',
    "Pages of a peer's flags held back: its set would pass the cap, or grew abnormally in 24 hours",
    ['reason'],
  );
  const budgetRatio =
    (metrics.registry.getSingleMetric('vouch_network_budget_used_ratio') as Gauge | undefined) ??
    new Gauge({
      name: 'vouch_network_budget_used_ratio',
      help: "Share of a peer's evaluation budget it used in the last 24 hours",
      labelNames: ['peer_id'],
      registers: [metrics.registry],
    });
  const budgetAlerts = metrics.counter(
    'vouch_network_budget_alerts_total',
    'Times a peer went past 80 % of its evaluation budget in 24 hours (enumeration alert)',
    ['peer_id'],
  );
  const pendingDropped = metrics.counter(
    'vouch_network_pending_dropped_total',
    "Identifiers named only in score requests, dropped over their client's quota of queued ones",
  );
  const published = gauge(metrics.registry, 'vouch_network_flags_published', 'Entries this deployment publishes');
  const matched = gauge(metrics.registry, 'vouch_network_matches', "Local identifiers matched in peers' flag sets");
  return {
    served: (endpoint, status) => served.inc({ endpoint, status: `${Math.floor(status / 100)}xx` }),
    refused: (reason) => refused.inc({ reason }),
    evaluations: (direction, count) => evaluations.inc({ direction }, count),
    synced: (outcome, flagsPulled) => {
      syncs.inc({ outcome });
      pulled.inc(flagsPulled);
    },
    flagsRefused: (reason) => refusedGrowth.inc({ reason }),
    budgetUsed: (peerId, used, budget, alert) => {
      budgetRatio.set({ peer_id: peerId }, budget > 0 ? used / budget : 1);
      if (alert) budgetAlerts.inc({ peer_id: peerId });
    },
    pendingDropped: (count) => pendingDropped.inc(count),
    setPublished: (count) => published.set(count),
    setMatched: (count) => matched.set(count),
  };
}
