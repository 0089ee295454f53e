// Smaller score decision rows (issue 42; docs/decisions.md, "A smaller decision row"): each stored
// row's `features` object of names becomes the array of its values in the frozen stored order, and
// its `rule_inputs` loses what the row already holds (the request summary's context members, the
// entity's age at the decision's time, the answered safe amount). The readers take either form
// (src/model/feature-vector.ts, decodeFeatures; src/model/stored-rule-inputs.ts), so a row this
// leaves as it was (a vector of an older set of signals, a damaged text) still reads as before.
//
// The conversion is written out here, as it stands at this migration, and not imported: the store
// sits below the model (.dependency-cruiser.cjs), and a migration keeps doing what it did when it
// was released. test/store/compact-decisions-migration.test.ts checks that every row it rewrites
// reads back, through the model's readers, exactly as it did.
//
// In chunks of CHUNK rows by id (the primary key: a keyset, never an offset), one select and one
// update a chunk, on both stores. A row already in the short forms is left alone, so running it
// again, or after a stop part way (SQLite runs migrations outside a transaction), is safe.
import { sql, type Kysely, type Migration, type RawBuilder } from 'kysely';
import type { Dialect } from '../dialect.ts';
import { parseJsonObject } from '../../lib/json-object.ts';

const CHUNK = 500;
const DAY_MS = 86_400_000;

/** STORED_FEATURE_ORDER (src/model/feature-vector.ts) as it is at this migration. */
const ORDER = [
  'completed_trades',
  'dispute_rate',
  'cancellation_rate',
  'chargebacks',
  'fraud_reports',
  'blocklisted',
  'new_account',
  'cold_start',
  'velocity_trades',
  'velocity_volume',
  'amount_vs_history',
  'new_counterparty',
  'payment_method_risk',
  'cross_border',
  'linked_flagged_entities',
  'cash_out_burst',
  'dormant_reactivation',
  'young_account_reversible_method',
  'shared_identifier_entities',
  'new_counterparty_large_trade',
  'network_flags',
  'ring_flagged_entities',
  'ring_size',
  'reversible_new_counterparty',
  'cross_border_new_counterparty',
  'fraudulent_dispute_losses',
];

/** The object a stored text holds, or undefined (migration-local shape of lib/json-object.ts). */
const object = (text: string | null): Record<string, unknown> | undefined => parseJsonObject(text) ?? undefined;

/**
 * The array form of a stored object of names, or undefined to keep the text: only an object of
 * exactly the stored order's names, in that order, each a number, whose array reads back as the
 * same object (a name past the array's end reads 0, so trailing zeros are left out).
 */
function compactFeatures(text: string | null): string | undefined {
  if (text === null || !text.startsWith('{')) return undefined;
  const stored = object(text);
  if (!stored) return undefined;
  const names = Object.keys(stored);
  if (names.length !== ORDER.length || names.some((n, i) => n !== ORDER[i])) return undefined;
  const values = ORDER.map((n) => stored[n]);
  if (values.some((v) => typeof v !== 'number')) return undefined;
  while (values.length > 0 && values[values.length - 1] === 0) values.pop();
  return JSON.stringify(values);
}

// The score response's safe amount as the rule test reads it (src/rules/replay-text.ts, SAFE_AMOUNT).
const SAFE_AMOUNT = /"safe_amount":(-?[0-9.eE+-]+|null)/;

/** The answered safe amount, when the rule test and the rules' statistics both read the same one. */
function answeredSafeAmount(result: string | null): number | null | undefined {
  if (result === null) return undefined;
  const m = SAFE_AMOUNT.exec(result);
  const byPattern = !m ? undefined : m[1] === 'null' ? null : Number(m[1]);
  const parsed = object(result)?.safe_amount;
  return byPattern !== undefined && parsed === byPattern ? byPattern : undefined;
}

const ageDays = (firstSeenAt: unknown, createdAt: number): number | undefined => {
  if (firstSeenAt === null) return 0;
  const first = typeof firstSeenAt === 'string' ? Date.parse(firstSeenAt) : Number.NaN;
  return Number.isFinite(first) ? Math.round((Math.max(0, createdAt - first) / DAY_MS) * 10_000) / 10_000 : undefined;
};

/**
 * The short form of a long `rule_inputs` (src/model/stored-rule-inputs.ts, shortRuleInputs), from
 * the row's own request, result and time; undefined to keep the text (not the long form).
 */
function compactInputs(
  text: string | null,
  request: string | null,
  result: string | null,
  createdAt: number,
): string | undefined {
  const inputs = object(text);
  const context = inputs?.context;
  if (!inputs || context === null || typeof context !== 'object' || Array.isArray(context)) return undefined;
  if (Object.keys(inputs).some((n) => !['amount_ref', 'context', 'entity', 'safe_amount'].includes(n)))
    return undefined;
  const { amount: _a, currency: _c, ...summary } = object(request) ?? {};
  const ctx = context as Record<string, unknown>;
  const out: Record<string, unknown> = { amount_ref: inputs.amount_ref };
  // a member of another type than the summary's strings (an object, a list) stays in the context
  if (Object.entries(summary).every(([n, v]) => typeof v === 'string' && Object.hasOwn(ctx, n) && ctx[n] === v)) {
    const extra = Object.fromEntries(Object.entries(ctx).filter(([n]) => !Object.hasOwn(summary, n)));
    if (Object.keys(extra).length > 0) out.extra_context = extra;
  } else {
    out.context = ctx;
  }
  const entity = inputs.entity;
  if (entity !== null && typeof entity === 'object' && !Array.isArray(entity)) {
    const { account_age_days: age, ...rest } = entity as Record<string, unknown>;
    out.entity = typeof age === 'number' && Object.is(ageDays(rest.first_seen_at, createdAt), age) ? rest : entity;
  } else {
    out.entity = entity;
  }
  if (!Object.hasOwn(inputs, 'safe_amount') || inputs.safe_amount !== answeredSafeAmount(result))
    out.safe_amount = inputs.safe_amount;
  return JSON.stringify(out);
}

interface Row {
  id: string;
  created_at: number | string;
  request: string | null;
  result: string | null;
  features: string | null;
  rule_inputs: string | null;
}

function update(dialect: Dialect, changed: Array<[string, string | null, string | null]>): RawBuilder<unknown> {
  const values = sql.join(changed.map(([id, f, r]) => sql`(${id}, ${f}, ${r})`));
  return dialect === 'postgres'
    ? sql`update decisions as d set features = v.features, rule_inputs = v.rule_inputs
        from (values ${values}) as v(id, features, rule_inputs) where d.id = v.id`
    : sql`update decisions set features = v.column2, rule_inputs = v.column3
        from (values ${values}) as v where decisions.id = v.column1`;
}

export function compactDecisions(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      let after = '';
      for (;;) {
        const { rows } = await sql<Row>`
          select id, created_at, request, result, features, rule_inputs from decisions
          where id > ${after} and kind = 'score' order by id limit ${CHUNK}`.execute(db);
        if (rows.length === 0) return;
        after = rows[rows.length - 1]!.id;
        const changed: Array<[string, string | null, string | null]> = [];
        for (const row of rows) {
          const features = compactFeatures(row.features);
          const inputs = compactInputs(row.rule_inputs, row.request, row.result, Number(row.created_at));
          if (features !== undefined || inputs !== undefined)
            changed.push([row.id, features ?? row.features, inputs ?? row.rule_inputs]);
        }
        if (changed.length > 0) await update(dialect, changed).execute(db);
      }
    },
  };
}
