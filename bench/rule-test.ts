// A rule test at scale (issue 30 item 4): fills a SQLite store with N score decisions (direct
// inserts in batches: request summary, feature vector, score response, outcome, rule inputs, a
// label on a few per cent, matched rules on some) and a 10,000-entry list with adds and removals
// spread over the window, then tests a rule through the route's own path (the worker thread
// reading over its own connection, keyset pages) and prints decisions/s, the CPU seconds of the
// whole process (every thread), its peak RSS and the serving thread's event-loop delay. A test of
// an empty window runs first, so the workers' start (seconds under tsx) is reported apart.
// `--workers 1` replays the window in one worker (the figures before issue 42); the result's digest
// shows that both give the same answer. `--postgres URL` copies the SQLite store's decisions and
// list into that (empty or already copied) PostgreSQL database and tests there.
//   npx tsx bench/rule-test.ts --decisions 1000000 [--db /tmp/vouch-rule-test-1000000.sqlite] [--rule NAME]
//     [--workers 2] [--postgres postgres://postgres@127.0.0.1:5432/vouch_rule_test]
// The store file is kept and reused by the next run of the same size.
import { existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import BetterSqlite3 from 'better-sqlite3';
import { openStore, type Store } from '../src/store/db.ts';
import { DEFAULT_POLICY, SIGNAL_NAMES } from '../src/model/policy.ts';
import { FEATURE_SET } from '../src/model/feature-vector.ts';
import { storeSource } from '../src/store/readers.ts';
import { REPLAY_WORKERS, runRuleTest } from '../src/rules/replay-thread.ts';
import { UNSAVED_RULE_ID } from '../src/rules/replay.ts';
import type { RuleBody } from '../src/rules/compile.ts';
import { mulberry32, type Random } from './quality/prng.ts';

const RULES: Record<string, RuleBody> = {
  // the kind of P2P rule: a large first trades by card from new accounts, or a known mule
  desk: {
    name: 'new card trade over twice the tier, or a mule',
    action: 'hold',
    condition:
      '(amount_ref != null && amount_ref > 2.0 && context.payment_method == "card" && entity.account_age_days < 30.0) || in_list("mules", entity_id)',
  },
  signals: {
    name: 'many flagged links',
    action: 'review',
    condition: 'signals.linked_flagged_entities >= 2.0 && score > 40.0',
  },
  amount: { name: 'large', action: 'decline', condition: 'amount > 1000.0' },
};

const { values: args } = parseArgs({
  options: {
    decisions: { type: 'string', default: '1000000' },
    db: { type: 'string' },
    rule: { type: 'string', default: 'desk' },
    workers: { type: 'string' },
    postgres: { type: 'string' },
  },
});
const N = Number(args.decisions);
const path = args.db ?? `/tmp/vouch-rule-test-${N}.sqlite`;
const MB = 2 ** 20;
/** Decision i was made at START + STEP·i ms: a million decisions span 30 days. */
const START = Date.UTC(2026, 9, 1);
const STEP = Math.floor((30 * 86_400_000) / 1_000_000);
const CURRENCIES = ['USDT', 'USD', 'EUR', 'NGN', 'BTC'];
const METHODS = ['bank_transfer', 'card', 'mobile_money', 'e_wallet', 'crypto'];
const LEVELS = ['low', 'low', 'low', 'medium', 'medium', 'high', 'critical'] as const;
const OUTCOME = { low: 'approve', medium: 'approve', high: 'review', critical: 'decline' } as const;
const entityId = (k: number) => createHash('sha256').update(`e${k}`).digest('hex');

function decision(i: number, random: Random, entities: number) {
  const values = Object.fromEntries(
    SIGNAL_NAMES.map((n) => [n, random() < 0.3 ? Math.round(random() * 3 * 1e4) / 1e4 : 0]),
  );
  const level = LEVELS[Math.floor(random() * LEVELS.length)]!;
  const score = Math.round(random() * 1000) / 10;
  const amount = Math.round(150 * Math.exp((random() - 0.5) * 3) * 100) / 100;
  const currency = CURRENCIES[i % CURRENCIES.length]!;
  const method = METHODS[Math.floor(random() * METHODS.length)]!;
  const entity = entityId(Math.floor(random() * entities));
  const shown = SIGNAL_NAMES.filter((n) => values[n]! > 0).slice(0, 6);
  const result = {
    entity_id: entity,
    score,
    risk_level: level,
    signals: shown.map((name) => ({
      name,
      value: values[name],
      weight: 1.5,
      description: `The ${name.replace(/_/g, ' ')} figure was ${values[name]} on this trade.`,
    })),
    decision_id: `d-${String(i).padStart(8, '0')}`,
    policy_version: DEFAULT_POLICY.version,
    scored_at: new Date(START + i * STEP).toISOString(),
    safe_amount: Math.round(amount * 3),
  };
  const context = {
    payment_method: method,
    country: random() < 0.5 ? 'NG' : 'KE',
    side: random() < 0.5 ? 'buy' : 'sell',
    trade_id: `t-${i}`,
  };
  const age = random() < 0.3 ? Math.round(random() * 30 * 1e4) / 1e4 : Math.round(random() * 900 * 1e4) / 1e4;
  const inputs = {
    amount_ref: amount / 100,
    context,
    safe_amount: result.safe_amount,
    entity: {
      account_age_days: age,
      completed_trades: Math.floor(random() * 40),
      chargebacks: random() < 0.05 ? 1 : 0,
      fraud_reports: 0,
      disputes_lost: 0,
      first_seen_at: null,
    },
  };
  const ruled = random() < 0.05;
  const outcome = ruled ? 'hold' : OUTCOME[level];
  const rules = ruled
    ? JSON.stringify([{ id: 'rul_other', name: 'other', version: 3, action: 'hold', reads: { amount } }])
    : null;
  const label = random() < 0.05 ? (random() < 0.2 ? 'fraud' : 'legit') : null;
  return [
    result.decision_id,
    entity,
    JSON.stringify(result),
    START + i * STEP,
    JSON.stringify(values),
    FEATURE_SET,
    `t-${i}`,
    level,
    label,
    JSON.stringify({ amount, currency, ...context }),
    outcome,
    rules,
    JSON.stringify(inputs),
  ];
}

async function fill(): Promise<void> {
  const store = openStore(`sqlite:${path}`);
  await store.migrate();
  await store.close();
  const db = new BetterSqlite3(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const insert =
    db.prepare(`insert into decisions (environment, id, kind, principal_id, owner_client_id, subject_id, request_digest, result, policy_version, created_at,
    features, feature_set, trade_id, risk_level, label, label_source, request, outcome, rules, rule_inputs) values ('live', ?, 'score', 'bench', 'bench', ?, 'bench', ?, '${DEFAULT_POLICY.version}', ?, ?, ?, ?, ?, ?, 'api', ?, ?, ?, ?)`);
  const random = mulberry32(30);
  const entities = Math.max(1, Math.floor(N / 5));
  const batch = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) insert.run(...decision(i, random, entities));
  });
  for (let i = 0; i < N; i += 20_000) batch(i, Math.min(N, i + 20_000));
  // The mule list: 10,000 entities, each added somewhere in the window, a tenth removed later.
  db.prepare(
    `insert into lists (id, environment, name, kind, created_at, created_by) values ('lst_mules', 'live', 'mules', 'entity', ?, 'bench')`,
  ).run(START);
  const entry = db.prepare(
    `insert into list_entries (list_id, value, added_at, added_by, removed_at) values ('lst_mules', ?, ?, 'bench', ?)`,
  );
  db.transaction(() => {
    for (let k = 0; k < 10_000; k++) {
      const added = START + Math.floor(random() * N * STEP);
      entry.run(
        entityId(k * 7),
        added,
        random() < 0.1 ? added + Math.floor(random() * (START + N * STEP - added)) : null,
      );
    }
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

/** The SQLite store's decisions and list, copied into PostgreSQL once (a later run finds them there). */
async function copyToPostgres(store: Store): Promise<void> {
  const had = await store.db
    .selectFrom('decisions')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirst();
  if (Number(had?.n ?? 0) >= N) return;
  const from = new BetterSqlite3(path, { readonly: true });
  const chunk = 1000;
  // a filled store's rowids run 1..N without gaps
  const read = from.prepare('select * from decisions where rowid > ? order by rowid limit ?');
  let last = 0;
  for (;;) {
    const rows = read.all(last, chunk) as Array<Record<string, unknown>>;
    if (rows.length === 0) break;
    last += rows.length;
    await store.db
      .insertInto('decisions')
      .values(rows as never)
      .execute();
  }
  for (const table of ['lists', 'list_entries'] as const) {
    const rows = from.prepare(`select * from ${table}`).all() as never[];
    for (let i = 0; i < rows.length; i += chunk)
      await store.db
        .insertInto(table)
        .values(rows.slice(i, i + chunk))
        .execute();
  }
  from.close();
}

const t0 = Date.now();
if (!existsSync(path)) await fill();
const store = openStore(args.postgres ?? `sqlite:${path}`);
await store.migrate();
if (args.postgres) await copyToPostgres(store);
const filled = Date.now() - t0;
const source = storeSource(store)!;
const body = RULES[args.rule!]!;
const task = {
  rule: { id: UNSAVED_RULE_ID, version: 0, body },
  settings: { outcomes: { ...OUTCOME }, signalNames: SIGNAL_NAMES, disputePrior: DEFAULT_POLICY.disputePrior },
};
// A first test over an empty window starts the workers (under tsx, compiling the sources takes
// seconds of CPU): the figures below are the test's own, as on a server that has run one before.
// Its window is long enough to be cut in a slice per worker, so that every worker starts.
const warm = Date.now();
const workers = args.workers === undefined ? undefined : Number(args.workers);
await runRuleTest('live', task, { source, environment: 'live', window: { since: 0, until: 1000 } }, { workers });
const warmup = (Date.now() - warm) / 1000;
const rssBefore = process.memoryUsage().rss;
let peakRss = rssBefore;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 100);
const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();
const load = loadavg()[0]!;
const started = Date.now();
const cpuStart = process.cpuUsage();
/** CPU seconds of the whole process (this thread and the worker) since the test started. */
const cpuSeconds = () => {
  const d = process.cpuUsage(cpuStart);
  return Math.round((d.user + d.system) / 1e4) / 100;
};
const result = await runRuleTest(
  'live',
  task,
  { source, environment: 'live', window: { since: START, until: START + N * STEP + 1 } },
  { workers, timeMs: 3_600_000 },
);
const wall = (Date.now() - started) / 1000;
delay.disable();
clearInterval(sampler);
await store.close();
const ms = (ns: number) => (ns / 1e6).toFixed(1);
console.log(
  JSON.stringify(
    {
      rule: args.rule,
      store: store.dialect,
      workers: workers ?? REPLAY_WORKERS,
      decisions: result.decisions,
      cpu_s: cpuSeconds(),
      fill_s: filled / 1000,
      worker_start_s: warmup,
      wall_s: wall,
      decisions_per_s: Math.round(result.decisions / wall),
      process_peak_rss_mb: Math.round(peakRss / MB),
      process_rss_growth_mb: Math.round((peakRss - rssBefore) / MB),
      event_loop_delay_ms: { max: ms(delay.max), p99: ms(delay.percentile(99)) },
      load_average_1m: load.toFixed(1),
      matched: result.matched,
      errors: result.errors,
      changed: result.changed,
      labelled: result.labelled,
      outcomes: result.outcomes,
      amount_matched: result.amount_matched,
      example: result.examples[0],
      result_sha256: createHash('sha256').update(JSON.stringify(result)).digest('hex'),
    },
    null,
    2,
  ),
);
