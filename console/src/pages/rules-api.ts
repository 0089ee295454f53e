// The shapes of the rules and lists API (docs/api.md, "Rules and lists") as the console reads them,
// and the calls the Rules and Lists pages make.
import { vouch } from '../api-client.ts';
import type { components } from '../../../sdk/src/schema.d.ts';
import type { ActorRef } from './actors.ts';

export const OUTCOMES = ['approve', 'review', 'hold', 'decline'] as const;
export type Outcome = (typeof OUTCOMES)[number];
export type RuleStatus = 'draft' | 'shadow' | 'active' | 'retired';
export const LIST_KINDS = ['entity', 'identifier', 'country', 'string', 'payment_method'] as const;
export type ListKind = (typeof LIST_KINDS)[number];

/** What a rule says, as it is written and saved. */
export interface RuleBody {
  name: string;
  condition: string;
  action?: Outcome | null;
  override?: boolean;
  final?: boolean;
  /** a number, or an expression over the same variables, in the request's currency */
  cap?: number | string | null;
  description?: string | null;
}

/** What POST /api/v1/rules/test tries (the form's rule: members left empty are left out). */
export type NewRule = components['schemas']['TestRuleRequest']['rule'];
type CreateRule = components['schemas']['CreateRuleRequest'];
type UpdateRule = components['schemas']['UpdateRuleRequest'];

export interface Rule extends RuleBody {
  id: string;
  version: number;
  status: RuleStatus;
  created_at?: string | number;
  created_by?: string;
  created_by_actor?: ActorRef;
  updated_at?: string | number;
  updated_by?: string;
  updated_by_actor?: ActorRef;
}

export interface RuleVersion extends RuleBody {
  version: number;
  status: RuleStatus;
  changed_at?: string | number;
  changed_by?: string;
  changed_by_actor?: ActorRef;
  reason?: string | null;
}

export interface FieldProblem {
  field: string;
  message: string;
  line?: number;
  column?: number;
}

export interface RuleCheck {
  valid: boolean;
  errors: FieldProblem[];
  /** the variables the condition reads */
  reads?: string[];
}

export interface RuleVariable {
  name: string;
  type: string;
  description: string;
  /** its value in a recent decision, when there is one */
  example?: unknown;
}

export interface RuleTestResult {
  decisions: number;
  matched: number;
  outcomes: { before: Partial<Record<Outcome, number>>; after: Partial<Record<Outcome, number>> };
  labelled: { fraud: { matched: number; total: number }; legit: { matched: number; total: number } };
  /** the money the matched decisions asked for: one sum, or a sum per currency */
  amount_matched: number | Record<string, number> | null;
  examples: TestExample[];
  since?: string;
  until?: string;
  /** decisions whose outcome the rule changes */
  changed?: number;
  /** decisions on which the condition failed at run time (no match) */
  errors?: number;
  /** decisions stored before rule inputs were: entity facts and amount_ref read as absent */
  without_inputs?: number;
}

interface TestExample {
  decision_id: string;
  reads: Record<string, unknown>;
  created_at?: string;
  before?: Outcome;
  after?: Outcome;
  label?: 'fraud' | 'legit' | null;
  amount?: number | null;
  currency?: string | null;
}

/** One rule's matches on one day. */
export interface DayCount {
  day: string;
  matched: number;
  shadow_matched: number;
}

export interface RuleList {
  name: string;
  kind: ListKind;
  description?: string | null;
  entries?: number;
  created_at?: string | number;
  created_by?: string;
  created_by_actor?: ActorRef;
}

export interface ListEntry {
  value: string;
  reason?: string | null;
  added_at?: string | number;
  added_by?: string;
  added_by_actor?: ActorRef;
  expires_at?: string | number | null;
}

const rule = (id: string) => ({ params: { path: { id } } });
const list = (name: string) => ({ params: { path: { name } } });

export const rulesApi = {
  list: () => vouch.GET('/api/v1/rules', { params: { query: { limit: 200 } } }),
  get: (id: string) => vouch.GET('/api/v1/rules/{id}', rule(id)),
  versions: (id: string) => vouch.GET('/api/v1/rules/{id}/versions', rule(id)),
  create: (body: CreateRule) => vouch.POST('/api/v1/rules', { body }),
  update: (id: string, body: UpdateRule) => vouch.PATCH('/api/v1/rules/{id}', { ...rule(id), body }),
  retire: (id: string, reason?: string) =>
    vouch.DELETE('/api/v1/rules/{id}', { params: { path: { id }, query: { reason } } }),
  check: (condition: string, cap?: number | string) =>
    vouch.POST('/api/v1/rules/check', { body: { condition, ...(cap !== undefined ? { cap } : {}) } }),
  variables: () => vouch.GET('/api/v1/rules/variables'),
  stats: (days: number) => vouch.GET('/api/v1/rules/stats', { params: { query: { days } } }),
  test: (body: NewRule, since: string) => vouch.POST('/api/v1/rules/test', { body: { rule: body, since } }),
  testSaved: (id: string, since: string) => vouch.POST('/api/v1/rules/{id}/test', { ...rule(id), body: { since } }),
};

export const listsApi = {
  list: () => vouch.GET('/api/v1/lists', { params: { query: { limit: 200 } } }),
  get: (name: string) => vouch.GET('/api/v1/lists/{name}', list(name)),
  create: (body: { name: string; kind: ListKind; description?: string }) => vouch.POST('/api/v1/lists', { body }),
  remove: (name: string) => vouch.DELETE('/api/v1/lists/{name}', list(name)),
  entries: (name: string, cursor?: string | null) =>
    vouch.GET('/api/v1/lists/{name}/entries', {
      params: { path: { name }, query: { limit: 50, cursor: cursor ?? undefined } },
    }),
  add: (name: string, body: { values: string[]; reason?: string; expires_at?: string }) =>
    vouch.POST('/api/v1/lists/{name}/entries', { ...list(name), body }),
  removeEntry: (name: string, value: string) =>
    vouch.DELETE('/api/v1/lists/{name}/entries/{value}', { params: { path: { name, value } } }),
};

export interface Stats {
  /** rule id → its days, oldest first */
  byRule: Map<string, DayCount[]>;
  /** UTC day → score decisions that day (the denominator of a hit rate) */
  scored: Map<string, number>;
  /** the window was too busy to read whole: its oldest days are cut */
  truncated: boolean;
}

/**
 * GET /api/v1/rules/stats: `{scored: [{day, decisions}], truncated, data: [{rule_id, days: [{day, matched,
 * shadow_matched}]}]}`.
 */
export function parseStats(raw: unknown): Stats {
  const r = (raw ?? {}) as {
    data?: { rule_id: string; days?: DayCount[] }[];
    scored?: { day: string; decisions: number }[];
    truncated?: boolean;
  };
  const byRule = new Map<string, DayCount[]>();
  for (const rule of r.data ?? [])
    byRule.set(
      rule.rule_id,
      [...(rule.days ?? [])].sort((a, b) => a.day.localeCompare(b.day)),
    );
  return {
    byRule,
    scored: new Map((r.scored ?? []).map((d) => [d.day.slice(0, 10), d.decisions])),
    truncated: r.truncated === true,
  };
}

/** The last `days` UTC days, oldest first, as YYYY-MM-DD. */
export function lastDays(days: number, now = Date.now()): string[] {
  return Array.from({ length: days }, (_, i) => new Date(now - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}

/** A value a condition read, as text: strings quoted, as CEL would write them. */
export function showValue(v: unknown): string {
  if (v === undefined) return 'absent';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Math.round(v * 10_000) / 10_000);
  return JSON.stringify(v);
}
