// The variables a rule condition reads, as the console lists them (docs/rules.md, "Variables").
// Types are CEL's: every number is a double (integer literals mix with them), nullable values are
// `dyn` so that `x != null && x > 2` type-checks. `signals.*` is expanded by the caller from the
// policy's signal names.
import type { RuleFacts } from '../model/outcomes.ts';
import { VARIABLE_ROOTS } from './cel-env.ts';
import { resolvePath } from './engine-ast.ts';

export const RULE_VARIABLES: ReadonlyArray<{ name: string; type: string; description: string }> = [
  { name: 'entity_id', type: 'string', description: 'the scored entity (the counterparty being assessed)' },
  { name: 'amount', type: 'double', description: "the trade's amount, in the request's currency" },
  { name: 'currency', type: 'string', description: "the request's currency code (e.g. USDT, EUR)" },
  {
    name: 'amount_ref',
    type: 'double or null (dyn)',
    description:
      "the amount over the currency's reference amount; null when the currency has none (test `amount_ref != null` first)",
  },
  {
    name: 'context',
    type: 'map(string, dyn)',
    description:
      "the request's context as sent (context.payment_method, context.country, …); an absent member is an error unless guarded by has(context.x)",
  },
  { name: 'entity.account_age_days', type: 'double', description: 'days since the entity was first seen' },
  { name: 'entity.completed_trades', type: 'double', description: 'trades the entity completed' },
  { name: 'entity.chargebacks', type: 'double', description: 'chargebacks recorded against the entity' },
  { name: 'entity.fraud_reports', type: 'double', description: 'fraud reports against the entity' },
  { name: 'entity.disputes_lost', type: 'double', description: 'disputes the entity lost' },
  {
    name: 'entity.first_seen_at',
    type: 'string or null (dyn)',
    description: 'ISO 8601 time the entity was first seen; null for a new entity',
  },
  {
    name: 'signals.<name>',
    type: 'double',
    description:
      "each signal of the active policy by name, 0 when the score did not emit it (the same names as the score's explanation)",
  },
  { name: 'score', type: 'double', description: "the policy's score, 0–100 (rules never change it)" },
  { name: 'risk_level', type: 'string', description: "the policy's risk level: low, medium, high or critical" },
  {
    name: 'safe_amount',
    type: 'double or null (dyn)',
    description: "the policy's safe amount before any rule's cap; null when it has none",
  },
  {
    name: 'in_list(name, value)',
    type: 'function (string, string) → bool',
    description:
      'whether value is a present entry of the list name (a string literal naming a list of this environment)',
  },
  {
    name: 're2_matches(text, pattern)',
    type: 'function (string, string) → bool',
    description: 'whether text contains a match of the RE2 pattern (a string literal; linear time)',
  },
];

/**
 * The value `name` (a variable or a path such as `entity.account_age_days`, `signals.velocity_trades`,
 * `context.payment_method`) had in a decision, for the console's example column; undefined when
 * the name is not a variable or the decision lacks it.
 */
export function variableExample(name: string, facts: RuleFacts): unknown {
  const segments = name.split('.');
  const root = segments[0];
  if (
    root === undefined ||
    !VARIABLE_ROOTS.has(root) ||
    segments.some((s) => s === '' || s === '__proto__' || s === 'constructor' || s === 'prototype')
  )
    return undefined;
  if (root === 'signals' && segments.length === 2) {
    // every signal of the policy reads 0 when absent; an unknown name is simply not shown
    const value = facts.signals && Object.hasOwn(facts.signals, segments[1]!) ? facts.signals[segments[1]!] : undefined;
    return value;
  }
  const value = resolvePath(facts as unknown as Record<string, unknown>, segments);
  if (value === null && !present(facts as unknown as Record<string, unknown>, segments)) return undefined;
  return value;
}

function present(obj: Record<string, unknown>, segments: readonly string[]): boolean {
  let cur: unknown = obj;
  for (const s of segments) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, s)) return false;
    cur = (cur as Record<string, unknown>)[s];
  }
  return true;
}
