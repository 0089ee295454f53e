// A score decision's `rule_inputs` column (docs/rules.md, "Testing a rule"): what a rule read that
// the rest of the row does not hold, written short (issue 42) and read back whole. The long form
// `{amount_ref, context, entity, safe_amount}` repeated the request summary's context members, the
// answered safe amount and the entity's age; the short form leaves out each of them when the row
// holds it, and the readers (rules/replay.ts, rules/stats.ts) rebuild the facts from the row's
// columns, whichever form it stored. The write (trust/rule-facts.ts) and the migration that
// shortens old rows (store/migrations/039_compact_decisions.ts) both go through shortRuleInputs.
import type { EntityFacts } from './outcomes.ts';

const DAY_MS = 86_400_000;

/**
 * The context members the request summary (the decisions' `request` column, src/trust/scoring.ts,
 * requestSummary) keeps beside the amount and the currency, each only when it is a string: the
 * summary is written from this list, and the short form leaves out what it holds.
 */
export const SUMMARY_CONTEXT = ['side', 'payment_method', 'country', 'counterparty_country', 'trade_id'] as const;

/** The members of `context` the summary of its request holds (the same values). */
export function summaryContextOf(context: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of SUMMARY_CONTEXT) if (typeof context[name] === 'string') out[name] = context[name];
  return out;
}

/** An entity's age in days at `now` since it was first seen, four decimals, 0 when never seen (docs/rules.md). */
export function accountAgeDays(firstSeenAt: number | null, now: number): number {
  return firstSeenAt === null ? 0 : Math.round((Math.max(0, now - firstSeenAt) / DAY_MS) * 10_000) / 10_000;
}

/** The long form's members: what a rule read beyond the features, request and result. */
export interface RuleInputs {
  amount_ref: number | null;
  context: Record<string, unknown>;
  entity: EntityFacts;
  /** the policy's safe amount, before any rule's cap */
  safe_amount: number | null;
}

/** What the rest of the row holds, from which the short form's absent members are rebuilt. */
export interface RowHeld {
  /** the request summary's context members (the `request` column less amount and currency) */
  summaryContext: Readonly<Record<string, unknown>>;
  /** the answered safe amount (the `result` column's, after the rules' caps) */
  answeredSafeAmount: number | null;
  /** the decision's time (`created_at`), the `now` the entity's age was taken at */
  createdAt: number;
}

const ageFrom = (firstSeenAt: unknown, createdAt: number): number | undefined => {
  if (firstSeenAt === null) return accountAgeDays(null, createdAt);
  if (typeof firstSeenAt !== 'string') return undefined;
  const first = Date.parse(firstSeenAt);
  return Number.isFinite(first) ? accountAgeDays(first, createdAt) : undefined;
};

/**
 * The short form of `inputs` for a row holding `held`: `{amount_ref, extra_context?, entity,
 * safe_amount?}`. `context` gives way to `extra_context`, the members the summary does not hold
 * (absent when none), when the summary's members are all in the context with the same values;
 * otherwise the whole context stays as `context`. `entity` loses `account_age_days` when its
 * `first_seen_at` and the decision's time give the same number; `safe_amount` is left out when
 * the answer's is the same.
 */
export function shortRuleInputs(inputs: RuleInputs, held: RowHeld): string {
  const out: Record<string, unknown> = { amount_ref: inputs.amount_ref };
  const context = inputs.context;
  const summary = Object.entries(held.summaryContext);
  if (summary.every(([name, value]) => Object.hasOwn(context, name) && context[name] === value)) {
    const extra: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(context))
      if (!Object.hasOwn(held.summaryContext, name)) extra[name] = value;
    if (Object.keys(extra).length > 0) out.extra_context = extra;
  } else {
    out.context = context;
  }
  const { account_age_days: age, ...entity } = inputs.entity;
  out.entity = Object.is(ageFrom(entity.first_seen_at, held.createdAt), age) ? entity : inputs.entity;
  if (inputs.safe_amount !== held.answeredSafeAmount) out.safe_amount = inputs.safe_amount;
  return JSON.stringify(out);
}

/**
 * The context a stored decision's rules read: the long form's `context`, else the summary's
 * members with the short form's `extra_context` after them (a map: its members, not their order,
 * are the context). A decision stored before rule inputs (`inputs` null) has the summary's.
 */
export function storedContext(
  inputs: Readonly<Record<string, unknown>> | null,
  summaryContext: Record<string, unknown>,
): Record<string, unknown> {
  const context = inputs?.context;
  if (context !== null && context !== undefined) return context as Record<string, unknown>;
  const extra = inputs?.extra_context;
  return extra !== null && typeof extra === 'object' ? { ...summaryContext, ...(extra as object) } : summaryContext;
}

/**
 * The entity facts a stored decision's rules read: the stored `entity`, its age rebuilt from
 * `first_seen_at` and the decision's time when the short form left it out; undefined when none
 * was stored.
 */
export function storedEntity(
  inputs: Readonly<Record<string, unknown>> | null,
  createdAt: number,
): EntityFacts | undefined {
  const entity = inputs?.entity;
  if (entity === null || typeof entity !== 'object') return undefined;
  const stored = entity as Record<string, unknown>;
  if (Object.hasOwn(stored, 'account_age_days')) return stored as unknown as EntityFacts;
  const age = ageFrom(stored.first_seen_at, createdAt);
  return (age === undefined ? stored : { account_age_days: age, ...stored }) as unknown as EntityFacts;
}
