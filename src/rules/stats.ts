// What the console shows beside the rules (docs/api.md, "Rules and lists"): each variable with an
// example value from the environment's most recent score decision, and each rule's matches per day.
import type { Environment } from '../lib/principal.ts';
import type { EntityFacts, MatchedRule, RuleFacts } from '../model/outcomes.ts';
import { RULE_VARIABLES, variableExample } from './variables.ts';
import type { Db } from './revisions.ts';
import { latestScoreDecision, ruleMatchRows, scoredPerDay } from '../audit/decision-stats-repository.ts';
import { decodeFeaturesOrNull } from '../model/feature-vector.ts';
import { storedContext, storedEntity } from '../model/stored-rule-inputs.ts';
import { parseJsonObject as parse } from '../lib/json-object.ts';
import { finite } from './replay-text.ts';

const DAY_MS = 86_400_000;
/** The most decisions with a match the stats read: the newest first, so a busy window is cut at its oldest end. */
export const STATS_MAX_ROWS = 200_000;

/**
 * The facts a stored score decision gave its rules, from its columns (request, features, result, rule_inputs in
 * either form: model/stored-rule-inputs.ts).
 */
async function latestFacts(
  db: Db,
  environment: Environment,
  signalNames: readonly string[],
  owner: string | undefined,
): Promise<RuleFacts | undefined> {
  const row = await latestScoreDecision(db, environment, owner);
  if (!row) return undefined;
  const request = parse(row.request) ?? {};
  const result = parse(row.result) ?? {};
  const features: Record<string, unknown> = decodeFeaturesOrNull(row.features) ?? {};
  const inputs = parse(row.rule_inputs) ?? {};
  const signals: Record<string, number> = {};
  for (const name of signalNames) signals[name] = finite(features[name]) ?? 0;
  const { amount: _amount, currency: _currency, ...summaryContext } = request;
  return {
    entity_id: row.subject_id,
    amount: finite(request.amount) ?? 0,
    currency: typeof request.currency === 'string' ? request.currency : '',
    amount_ref: finite(inputs.amount_ref),
    context: storedContext(inputs, summaryContext),
    entity: storedEntity(inputs, Number(row.created_at)) ?? ({} as EntityFacts),
    signals,
    score: finite(result.score) ?? 0,
    risk_level: typeof result.risk_level === 'string' ? result.risk_level : (row.risk_level ?? ''),
    safe_amount: 'safe_amount' in inputs ? finite(inputs.safe_amount) : finite(result.safe_amount),
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
  const rows = await ruleMatchRows(db, environment, since, owner, STATS_MAX_ROWS + 1);
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
  const perDay = await scoredPerDay(db, environment, since, owner);
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
