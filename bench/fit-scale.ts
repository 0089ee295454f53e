// A fit at scale (issue 20 item 5): fills a SQLite store with N labelled score decisions (direct inserts, realistic
// feature vectors), then fits through the route's own job path (the lease, the worker thread reading over its own
// connection) and prints the wall time, the worker's peak heap and the serving thread's event-loop delay.
//   npx tsx bench/fit-scale.ts --decisions 1000000 [--fit 300000] [--job fit|backtest] [--db
//     /tmp/vouch-fit-scale-1000000.sqlite] [--heap 1024]
// It runs itself under --max-old-space-size=1024 (what `npm start` gives every thread, workers included) unless --heap
// says otherwise. The store file is kept and reused by the next run of the same size.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import BetterSqlite3 from 'better-sqlite3';
import { openStore } from '../src/store/db.ts';
import { DEFAULT_POLICY, SIGNAL_NAMES, type SignalName } from '../src/model/policy.ts';
import { replayScore } from '../src/model/arithmetic.ts';
import { FEATURE_SET } from '../src/model/feature-vector.ts';
import { backtestFromStore, fitFromStore } from '../src/policies/service.ts';
import { INTERACTIONS } from '../src/model/features.ts';
import type { WorkerProgress } from '../src/policies/job-thread.ts';
import { mulberry32, type Random } from './quality/prng.ts';

const { values: args } = parseArgs({
  options: {
    decisions: { type: 'string', default: '1000000' },
    db: { type: 'string' },
    heap: { type: 'string', default: '1024' },
    fit: { type: 'string' },
    job: { type: 'string', default: 'fit' },
  },
});
const N = Number(args.decisions);
/** fit only the first this many of the stored decisions (a time window), to measure smaller sizes on one store */
const FIT = args.fit === undefined ? N : Number(args.fit);
const HEAP_MB = Number(args.heap);
const MB = 2 ** 20;

if (Math.abs(getHeapStatistics().heap_size_limit / MB - HEAP_MB) > 128) {
  // Re-run under the heap limit asked for; the worker thread inherits it.
  const run = spawnSync(
    process.execPath,
    [`--max-old-space-size=${HEAP_MB}`, ...process.execArgv, process.argv[1]!, ...process.argv.slice(2)],
    { stdio: 'inherit' },
  );
  process.exit(run.status ?? 1);
}

const path = args.db ?? `/tmp/vouch-fit-scale-${N}.sqlite`;

/** Signal values in their documented ranges (docs/signals.md), sparse as live traffic is. */
function features(random: Random): Record<SignalName, number> {
  const trades = random() < 0.2 ? 0 : Math.floor(-Math.log(1 - random()) * 40);
  const lost = random() < 0.1 ? Math.floor(random() * 4) : 0;
  const rare = (p: number, max: number) => (random() < p ? Math.ceil(random() * max) : 0);
  const young = random() < 0.3 ? random() : 0;
  const values = {
    completed_trades: Math.log2(1 + trades),
    dispute_rate: Math.max(0, (lost + 1) / (trades + 10) - 0.1),
    cancellation_rate: random() < 0.3 ? random() * 0.5 : 0,
    chargebacks: Math.log2(1 + rare(0.05, 3)),
    fraud_reports: Math.log2(1 + rare(0.03, 2)),
    blocklisted: random() < 0.01 ? 1 : 0,
    new_account: young,
    cold_start: trades === 0 && random() < 0.5 ? 1 : 0,
    velocity_trades: random() < 0.1 ? random() * 3 : 0,
    velocity_volume: random() < 0.1 ? random() * 3 : 0,
    amount_vs_history: random() < 0.4 ? random() * 4 : 0,
    new_counterparty: random() < 0.5 ? 1 : 0,
    payment_method_risk: [0.3, 0.8, 0.4, 0.2, 0.5, 0.1][Math.floor(random() * 6)]!,
    cross_border: random() < 0.2 ? 1 : 0,
    linked_flagged_entities: rare(0.03, 3),
    cash_out_burst: random() < 0.05 ? random() : 0,
    dormant_reactivation: random() < 0.03 ? 1 : 0,
    young_account_reversible_method: young > 0 && random() < 0.3 ? young : 0,
    shared_identifier_entities: rare(0.05, 4),
    new_counterparty_large_trade: random() < 0.05 ? random() : 0,
    network_flags: rare(0.01, 2),
    ring_flagged_entities: rare(0.02, 3),
    ring_size: random() < 0.1 ? Math.log2(1 + Math.ceil(random() * 20)) : 0,
    fraudulent_dispute_losses: lost > 0 && random() < 0.3 ? Math.log2(1 + lost) : 0,
  };
  return {
    ...values,
    reversible_new_counterparty: INTERACTIONS.reversible_new_counterparty(values),
    cross_border_new_counterparty: INTERACTIONS.cross_border_new_counterparty(values),
  };
}

const CURRENCIES = ['USD', 'EUR', 'NGN', 'USDT', 'BTC'];
/** Decision i was made at START + 10·i ms. */
const START = Date.UTC(2025, 0, 1);

async function fill(): Promise<void> {
  const store = openStore(`sqlite:${path}`);
  await store.migrate();
  await store.close();
  const db = new BetterSqlite3(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const insert =
    db.prepare(`insert into decisions (environment, id, kind, principal_id, owner_client_id, subject_id, request_digest, result, policy_version, created_at,
    features, feature_set, trade_id, risk_level, label, label_source, request) values ('live', ?, 'score', 'bench', 'bench', ?, 'bench', '{}', ?, ?, ?, ?, ?, ?, ?, 'api', ?)`);
  const random = mulberry32(20);
  // The truth: the built-in policy's ranking, shifted so about 5 % of decisions are fraud.
  const truth = { ...DEFAULT_POLICY, bias: DEFAULT_POLICY.bias - 5 };
  const entities = Math.max(1, Math.floor(N / 5));

  const many = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const f = features(random);
      const label = random() < replayScore(truth, f) / 100 ? 'fraud' : 'legit';
      const entity = createHash('sha256')
        .update(`e${Math.floor(random() * entities)}`)
        .digest('hex');
      const currency = CURRENCIES[i % CURRENCIES.length]!;
      const values = Object.fromEntries(SIGNAL_NAMES.map((n) => [n, Math.round(f[n] * 1e4) / 1e4]));
      insert.run(
        `d-${String(i).padStart(8, '0')}`,
        entity,
        DEFAULT_POLICY.version,
        START + i * 10,
        JSON.stringify(values),
        FEATURE_SET,
        `t-${i}`,
        'low',
        label,
        JSON.stringify({ amount: Math.round(150 * Math.exp((random() - 0.5) * 1.5) * 100) / 100, currency }),
      );
    }
  });
  for (let i = 0; i < N; i += 50_000) many(i, Math.min(N, i + 50_000));
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

const t0 = Date.now();
if (!existsSync(path)) await fill();
const filled = Date.now() - t0;
const store = openStore(`sqlite:${path}`);
await store.migrate();
const rssBefore = process.memoryUsage().rss;
let peakRss = rssBefore;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 100);
let peakHeap = 0;
const phases: string[] = [];
const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();
const started = Date.now();
let outcome: string;
try {
  const options = {
    store,
    onProgress: (p: WorkerProgress) => {
      peakHeap = Math.max(peakHeap, p.heapUsed);
      if (phases[phases.length - 1]?.split(' ')[0] !== p.phase)
        phases.push(`${p.phase} at ${((Date.now() - started) / 1000).toFixed(1)} s`);
    },
  };
  const window = { until: START + FIT * 10 };
  if (args.job === 'backtest') {
    const result = await backtestFromStore(
      store.db,
      'live',
      DEFAULT_POLICY,
      window,
      async () => DEFAULT_POLICY,
      options,
    );
    outcome = `replayed: ${result.decisions} decisions, ${result.labelled} labelled; ROC-AUC ${result.metrics.roc_auc?.toFixed(4)}`;
  } else {
    const { report } = await fitFromStore(
      store.db,
      { environment: 'live', base: DEFAULT_POLICY, now: Date.now(), ...window },
      options,
    );
    outcome = `fitted: ${report.labels.fraud} fraud, ${report.labels.legit} legit; holdout ROC-AUC ${report.metrics.candidate.roc_auc?.toFixed(4)} (base ${report.metrics.base.roc_auc?.toFixed(4)})`;
  }
} catch (err) {
  outcome = `FAILED: ${err instanceof Error ? err.message : String(err)}`;
}
const wall = Date.now() - started;
delay.disable();
clearInterval(sampler);
await store.close();
const ms = (ns: number) => (ns / 1e6).toFixed(1);
console.log(
  JSON.stringify(
    {
      job: args.job,
      decisions: FIT,
      stored: N,
      heap_limit_mb: Math.round(getHeapStatistics().heap_size_limit / MB),
      fill_s: filled / 1000,
      fit_wall_s: wall / 1000,
      phases,
      worker_peak_heap_mb: peakHeap ? Math.round(peakHeap / MB) : null,
      process_peak_rss_mb: Math.round(peakRss / MB),
      process_rss_growth_mb: Math.round((peakRss - rssBefore) / MB),
      event_loop_delay_ms: { max: ms(delay.max), p99: ms(delay.percentile(99)), mean: ms(delay.mean) },
      outcome,
    },
    null,
    2,
  ),
);
