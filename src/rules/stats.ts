// What the console shows beside the rules (docs/api.md, "Rules and lists"): each variable with an
// example value from the environment's most recent score decision, and each rule's matches per day.
import { sql } from 'kysely';
import type { Environment } from '../lib/principal.ts';
import type { EntityFacts, MatchedRule, RuleFacts } from '../model/outcomes.ts';
import { RULE_VARIABLES, variableExample } from './variables.ts';
import type { Db } from './revisions.ts';

const DAY_MS = 86_400_000;
/** The most decisions with a match the stats read: the newest first, so a busy window is cut at its oldest end. */
export const STATS_MAX_ROWS = 200_000;

const parse = (text: string | null | undefined): Record<string, unknown> | null => {
  if (!text) return null;
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
};
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The facts a stored score decision gave its rules, from its columns (request, features, result, rule_inputs). */
async function latestFacts(
  db: Db,
  environment: Environment,
  signalNames: readonly string[],
  owner: string | undefined,
): Promise<RuleFacts | undefined> {
  const row = await db
    .selectFrom('decisions')
    .select(['subject_id', 'request', 'features', 'result', 'risk_level', 'rule_inputs'])
    .where('environment', '=', environment)
    .where('kind', '=', 'score')
    .$if(owner !== undefined, (q) => q.where('owner_client_id', '=', owner!))
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!row) return undefined;
  const request = parse(row.request) ?? {};
  const result = parse(row.result) ?? {};
  const features = parse(row.features) ?? {};
  const inputs = parse(row.rule_inputs) ?? {};
  const signals: Record<string, number> = {};
  for (const name of signalNames) signals[name] = num(features[name]) ?? 0;
  const { amount: _amount, currency: _currency, ...summaryContext } = request;
  return {
    entity_id: row.subject_id,
    amount: num(request.amount) ?? 0,
    currency: typeof request.currency === 'string' ? request.currency : '',
    amount_ref: num(inputs.amount_ref),
    context: (inputs.context as Record<string, unknown> | undefined) ?? summaryContext,
    entity: (inputs.entity as EntityFacts | undefined) ?? ({} as EntityFacts),
    signals,
    score: num(result.score) ?? 0,
    risk_level: typeof result.risk_level === 'string' ? result.risk_level : (row.risk_level ?? ''),
    safe_amount: 'safe_amount' in inputs ? num(inputs.safe_amount) : num(result.safe_amount),
  };
}

interface VariableView {
  name: string;
  type: string;
  description: string;
  example?: unknown;
}

/**
 * RULE_VARIABLES with `signals.<name>` expanded to each signal, and examples when a decision exists:
 * the latest of the caller's own decisions (`owner`; undefined for an admin, who reads every client's).
 */
export async function variables(
  db: Db,
  environment: Environment,
  signalNames: readonly string[],
  owner: string | undefined,
): Promise<VariableView[]> {
  const facts = await latestFacts(db, environment, signalNames, owner);
  const out: VariableView[] = [];
  const withExample = (v: Omit<VariableView, 'example'>): VariableView => {
    if (!facts || v.name.includes('(')) return v;
    const example = variableExample(v.name, facts);
    return example === undefined ? v : { ...v, example };
  };
  for (const v of RULE_VARIABLES) {
    if (v.name === 'signals.<name>') {
      for (const s of signalNames)
        out.push(withExample({ name: `signals.${s}`, type: v.type, description: `the signal ${s}; ${v.description}` }));
    } else {
      out.push(withExample({ ...v }));
    }
  }
  return out;
}

interface RuleDays {
  rule_id: string;
  name: string;
  days: Array<{ day: string; matched: number; shadow_matched: number }>;
}

export interface RuleStats {
  since: string;
  until: string;
  /** score decisions per day in the window (the denominator of a hit rate) */
  scored: Array<{ day: string; decisions: number }>;
  /** decisions with a match read; true when STATS_MAX_ROWS cut the window short */
  decisions_read: number;
  truncated: boolean;
  data: RuleDays[];
}

const dayOf = (ms: number) => new Date(Math.floor(ms / DAY_MS) * DAY_MS).toISOString().slice(0, 10);

/**
 * Matches per rule and UTC day over the last `days` days, from the decisions whose rules or shadow_rules are set —
 * the caller's own decisions (`owner`), or every client's for an admin (undefined).
 */
export async function ruleStats(
  db: Db,
  environment: Environment,
  days: number,
  now: number,
  owner: string | undefined,
): Promise<RuleStats> {
  const since = (Math.floor(now / DAY_MS) - days + 1) * DAY_MS;
  const rows = await db
    .selectFrom('decisions')
    .select(['created_at', 'rules', 'shadow_rules'])
    .where('environment', '=', environment)
    .where('kind', '=', 'score')
    .where('created_at', '>=', since)
    .$if(owner !== undefined, (q) => q.where('owner_client_id', '=', owner!))
    .where((eb) => eb.or([eb('rules', 'is not', null), eb('shadow_rules', 'is not', null)]))
    .orderBy('created_at', 'desc')
    .limit(STATS_MAX_ROWS + 1)
    .execute();
  const truncated = rows.length > STATS_MAX_ROWS;
  const byRule = new Map<string, { name: string; days: Map<string, { matched: number; shadow_matched: number }> }>();
  const count = (list: string | null | undefined, day: string, key: 'matched' | 'shadow_matched') => {
    if (!list) return;
    let matched: MatchedRule[];
    try {
      matched = JSON.parse(list) as MatchedRule[];
    } catch {
      return;
    }
    if (!Array.isArray(matched)) return;
    for (const m of matched) {
      if (!m || typeof m.id !== 'string') continue;
      let r = byRule.get(m.id);
      if (!r) byRule.set(m.id, (r = { name: m.name, days: new Map() }));
      let d = r.days.get(day);
      if (!d) r.days.set(day, (d = { matched: 0, shadow_matched: 0 }));
      d[key]++;
    }
  };
  for (const row of rows.slice(0, STATS_MAX_ROWS)) {
    const day = dayOf(Number(row.created_at));
    count(row.rules, day, 'matched');
    count(row.shadow_rules, day, 'shadow_matched');
  }
  // Integer division on both stores: the UTC day number (a literal, so select and group by are one expression).
  const dayNumber = sql<number>`created_at / ${sql.lit(DAY_MS)}`;
  const perDay = await db
    .selectFrom('decisions')
    .select((eb) => [dayNumber.as('day'), eb.fn.countAll<number>().as('n')])
    .where('environment', '=', environment)
    .where('kind', '=', 'score')
    .where('created_at', '>=', since)
    .$if(owner !== undefined, (q) => q.where('owner_client_id', '=', owner!))
    .groupBy(dayNumber)
    .execute();
  return {
    since: new Date(since).toISOString(),
    until: new Date(now).toISOString(),
    scored: perDay
      .map((r) => ({ day: dayOf(Math.floor(Number(r.day)) * DAY_MS), decisions: Number(r.n) }))
      .sort((a, b) => a.day.localeCompare(b.day)),
    decisions_read: Math.min(rows.length, STATS_MAX_ROWS),
    truncated,
    data: [...byRule].map(([rule_id, r]) => ({
      rule_id,
      name: r.name,
      days: [...r.days].map(([day, c]) => ({ day, ...c })).sort((a, b) => a.day.localeCompare(b.day)),
    })),
  };
}
