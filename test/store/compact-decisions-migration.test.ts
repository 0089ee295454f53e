// 039_compact_decisions over a store holding decisions in the long forms (issue 42): each score
// decision's features object becomes the array and its rule inputs the short form wherever that
// reads back the same, in chunks past the first page of ids; every row reads back, through the
// model's readers, exactly as before (the API's features object, every fact a rule test reads),
// the rows it cannot shorten keep their text, and running it again changes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import { backends } from '../helpers/app.ts';
import { storeMigratedBefore } from '../helpers/migrations.ts';
import { compactDecisions } from '../../src/store/migrations/039_compact_decisions.ts';
import { SIGNAL_NAMES } from '../../src/model/policy.ts';
import { decodeFeaturesOrNull } from '../../src/model/feature-vector.ts';
import { INTERACTIONS } from '../../src/model/features.ts';
import { accountAgeDays, summaryContextOf } from '../../src/model/stored-rule-inputs.ts';
import { StoredFacts, type ReplayRow, type ReplaySettings } from '../../src/rules/replay.ts';
import type { Store } from '../../src/store/db.ts';

const T0 = Date.UTC(2026, 5, 1);
const DAY = 86_400_000;
const ROWS = 1234;
const settings: ReplaySettings = {
  outcomes: { low: 'approve', medium: 'approve', high: 'review', critical: 'decline' },
  signalNames: SIGNAL_NAMES,
  disputePrior: { alpha: 1, beta: 9 },
};

/** A deterministic stream of numbers in [0, 1). */
function random(seed: number) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0) / 2 ** 32;
}

/** Decision rows as the code before 039 wrote them, with the variants a store may hold. */
function oldRows(): Record<string, unknown>[] {
  const r = random(42);
  const rows: Record<string, unknown>[] = [];
  for (let i = 0; i < ROWS; i++) {
    const createdAt = T0 + i * 61_000;
    const values = Object.fromEntries(
      SIGNAL_NAMES.map((n) => [n, r() < 0.6 ? 0 : r() < 0.5 ? Math.round(r() * 1e4) / 1e4 : r() * 7]),
    );
    if (i % 97 === 0) for (const n of Object.keys(INTERACTIONS)) delete values[n]; // stored before the interactions
    const context: Record<string, unknown> = { payment_method: i % 2 ? 'card' : 'bank_transfer', side: 'sell' };
    if (i % 3 === 0) context.counterparty_id = `cp-${i}`;
    if (i % 5 === 0) Object.assign(context, { country: 'DE', trade_id: `t-${i}`, items: [1, { x: i }] });
    const summary: Record<string, unknown> = { amount: 10 + i, currency: 'USD', ...summaryContextOf(context) };
    if (i % 41 === 0) summary.side = 'buy'; // a summary that is not the context's: the context stays
    const first = i % 7 === 0 ? null : createdAt - Math.floor(r() * 90 * DAY);
    const entity = {
      account_age_days: i % 53 === 0 ? 0.5 : accountAgeDays(first, createdAt), // 53: an age the time does not give
      completed_trades: Math.floor(r() * 20),
      chargebacks: 0,
      fraud_reports: i % 11 === 0 ? 1 : 0,
      disputes_lost: 0,
      first_seen_at: first === null ? null : new Date(first).toISOString(),
    };
    const policySafe = i % 13 === 0 ? null : Math.round(r() * 1e6) / 100;
    const answered = i % 17 === 0 && policySafe !== null ? Math.min(policySafe, 50) : policySafe; // 17: a cap
    const result = { entity_id: `e-${i}`, score: Math.round(r() * 100), risk_level: 'low', signals: [] as unknown[] };
    const features = i % 89 === 0 ? '{damaged' : i % 83 === 0 ? null : JSON.stringify(values);
    rows.push({
      id: `dec_${String(i).padStart(6, '0')}`,
      kind: i % 29 === 0 ? 'dispute_analysis' : 'score',
      environment: i % 10 === 0 ? 'test' : 'live',
      principal_id: 'p',
      owner_client_id: 'cli',
      subject_id: `e-${i % 50}`,
      request_digest: 'd',
      result: JSON.stringify({ ...result, decision_id: `dec_${i}`, safe_amount: answered, outcome: 'approve' }),
      policy_version: 'v1',
      created_at: createdAt,
      features,
      feature_set: 3,
      risk_level: 'low',
      request: JSON.stringify(summary),
      outcome: 'approve',
      rule_inputs:
        i % 31 === 0 ? null : JSON.stringify({ amount_ref: (10 + i) / 1000, context, entity, safe_amount: policySafe }),
    });
  }
  return rows;
}

const COLUMNS = ['id', 'kind', 'subject_id', 'created_at', 'request', 'features', 'feature_set', 'result'] as const;
const read = async (store: Store) =>
  (await store.db
    .selectFrom('decisions')
    .select([...COLUMNS, 'risk_level', 'outcome', 'rules', 'label', 'rule_inputs'])
    .orderBy('id')
    .execute()) as unknown as Array<ReplayRow & { kind: string }>;

/** What every reader sees of each row: the API's features text and the facts a rule test reads. */
function readings(rows: Array<ReplayRow & { kind: string }>) {
  return rows.map((row) => {
    const r = { ...row, created_at: Number(row.created_at), feature_set: Number(row.feature_set) };
    const f = new StoredFacts(r, settings);
    return {
      id: row.id,
      features: JSON.stringify(decodeFeaturesOrNull(row.features)),
      facts: {
        amount_ref: f.amount_ref,
        context: f.context,
        entity: f.entity,
        signals: f.signals,
        score: f.score,
        safe_amount: f.safe_amount,
        amount: f.amount,
        currency: f.currency,
      },
    };
  });
}

const size = (rows: ReplayRow[], column: 'features' | 'rule_inputs') =>
  rows.reduce((n, row) => n + (row[column]?.length ?? 0), 0);

for (const backend of backends()) {
  test(`039_compact_decisions shortens the stored rows and every reader reads the same [${backend}]`, async () => {
    const { store, drop } = await storeMigratedBefore(backend, '039');
    try {
      const rows = oldRows();
      for (let i = 0; i < rows.length; i += 200)
        await store.db
          .insertInto('decisions')
          .values(rows.slice(i, i + 200) as never)
          .execute();
      const before = await read(store);
      assert.equal(before.length, ROWS);

      assert.ok((await store.migrate()).includes('039_compact_decisions'));
      const after = await read(store);
      assert.deepStrictEqual(readings(after), readings(before));
      for (const [i, row] of after.entries()) {
        const old = before[i]!;
        const score = old.kind === 'score';
        const full = old.features?.startsWith('{"') && !(i % 97 === 0);
        assert.equal(row.features?.startsWith('['), score && full ? true : old.features === null ? undefined : false);
        if (!(score && full)) assert.equal(row.features, old.features, `${row.id} keeps its text`);
        if (!score || old.rule_inputs === null) assert.equal(row.rule_inputs, old.rule_inputs, row.id);
        else assert.equal('context' in JSON.parse(row.rule_inputs!), i % 41 === 0, row.id);
        for (const column of COLUMNS.filter((c) => c !== 'features')) assert.deepEqual(row[column], old[column]);
      }
      assert.ok(size(after, 'features') < size(before, 'features') / 3, 'the vectors are a fraction of the objects');
      assert.ok(size(after, 'rule_inputs') < size(before, 'rule_inputs'), 'the rule inputs are shorter');

      // Again, over rows already short: nothing changes.
      await compactDecisions(backend).up(store.db as Kysely<unknown>);
      assert.deepStrictEqual(await read(store), after);
      const indexes =
        backend === 'sqlite'
          ? await sql<{
              name: string;
            }>`select name from sqlite_master where type = 'index' and tbl_name = 'decisions' and sql is not null order by name`.execute(
              store.db,
            )
          : await sql<{
              name: string;
            }>`select indexname as name from pg_indexes where tablename = 'decisions' and indexname <> 'decisions_pkey' and schemaname = current_schema() order by indexname`.execute(
              store.db,
            );
      assert.deepEqual(
        indexes.rows.map((r) => r.name),
        ['decisions_claim', 'decisions_created', 'decisions_owner_created', 'decisions_subject_trade'],
        'the indexes docs/decisions.md justifies, each for its queries',
      );
    } finally {
      await drop();
    }
  });
}
