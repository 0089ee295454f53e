// Rule statistics off the event loop (docs/api.md, "Rules and lists"): one worker per process,
// started on first use, idle without keeping the process alive. A store that cannot be opened
// twice (in-memory SQLite, tests) is read in place.
import { LazyWorker } from '../lib/worker-thread.ts';
import type { Environment } from '../lib/principal.ts';
import { storeSource, type StoreSource } from '../store/readers.ts';
import type { Store } from '../store/db.ts';
import { ruleStats, type RuleStats } from './stats.ts';

export interface StatsJob {
  source: StoreSource;
  environment: Environment;
  days: number;
  now: number;
  owner: string | undefined;
}

const thread = new LazyWorker<StatsJob>(import.meta.url, 'stats-worker');

export function ruleStatsOff(
  store: Store,
  environment: Environment,
  days: number,
  now: number,
  owner: string | undefined,
): Promise<RuleStats> {
  const source = storeSource(store);
  if (!source) return ruleStats(store.db, environment, days, now, owner);
  return thread.submit<RuleStats>({ source, environment, days, now, owner });
}
