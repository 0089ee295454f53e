// The outcome of a score with its rules (docs/rules.md, "Precedence" and "Caps"): the most severe
// of the policy's outcome and the matched active rules' actions, except that a matched override
// approve wins unless a final decline matched too; the safe amount is the least of the policy's
// and the matched caps. Shadow rules are evaluated with what they would have done, and change
// nothing. Pure and never throwing: a score must not fail because of a rule.
import {
  OUTCOME_SEVERITY,
  type MatchedRule,
  type Outcome,
  type RuleFacts,
  type RuleVerdict,
  type ShadowMatch,
} from '../model/outcomes.ts';
import { RULE_LIMITS, activationFor, type Activation, type RuleEnvironment } from './cel-env.ts';
import { internalOf, type CompiledRule, type ListLookup, type RuleEvaluation } from './compile.ts';

interface Matched {
  rule: CompiledRule;
  result: RuleEvaluation;
}

/** The outcome given the policy's and the matched rules' actions (docs/rules.md, "Precedence"). */
function combineOutcome(
  policyOutcome: Outcome,
  matched: ReadonlyArray<Pick<CompiledRule, 'action' | 'override' | 'final'>>,
): Outcome {
  let finalDecline = false;
  let override = false;
  let outcome = policyOutcome;
  for (const r of matched) {
    if (r.action === null) continue;
    if (r.action === 'decline' && r.final) finalDecline = true;
    if (r.action === 'approve' && r.override) override = true;
    if (OUTCOME_SEVERITY[r.action] > OUTCOME_SEVERITY[outcome]) outcome = r.action;
  }
  if (finalDecline) return 'decline';
  if (override) return 'approve';
  return outcome;
}

/** characters of `reads` (as JSON) kept per decision, over all its matched rules (docs/rules.md, "Limits") */
const MAX_DECISION_READS = 16_384;

/** Cuts the reads of the matched rules once the decision's budget is spent (in rule order). */
function boundReads(matched: Matched[], budget: { left: number }): void {
  for (const m of matched) {
    const size = JSON.stringify(m.result.reads).length;
    if (size <= budget.left) {
      budget.left -= size;
      continue;
    }
    budget.left = 0;
    m.result = { ...m.result, reads: { '…': `not kept: ${size} characters over the decision's reads budget` } };
  }
}

function shape(m: Matched): MatchedRule {
  const { rule, result } = m;
  const out: MatchedRule = {
    id: rule.id,
    name: rule.name,
    version: rule.version,
    action: rule.action,
    reads: result.reads,
  };
  if (rule.override) out.override = true;
  if (rule.final) out.final = true;
  if (result.cap !== null || result.error?.startsWith('cap:')) out.cap = result.cap;
  return out;
}

function report(
  onError: ((rule: CompiledRule, error: string) => void) | undefined,
  rule: CompiledRule,
  error: string,
): void {
  if (!onError) return;
  try {
    onError(rule, error);
  } catch {
    // a metrics hook that fails must not fail the score
  }
}

/**
 * The run-time budget's second line (docs/rules.md, "Cost"): a rule whose estimate allows a slow
 * evaluation is timed, and told whether it stayed within the budget. Rules estimated as cheap are
 * never timed, so the common rule pays nothing for it.
 */
export interface RuleGuard {
  within(rule: CompiledRule): void;
  exceeded(rule: CompiledRule, ms: number): void;
}

function evaluateOne(
  rule: CompiledRule,
  facts: RuleFacts,
  lists: ListLookup,
  shared: { env: RuleEnvironment | null; activation: Activation | null },
): RuleEvaluation {
  const internal = internalOf(rule);
  if (!internal) return rule.evaluate(facts, lists);
  try {
    if (internal.renv !== shared.env || shared.activation === null) {
      shared.env = internal.renv;
      shared.activation = activationFor(internal.renv, facts);
    }
    return internal.run(shared.activation, lists);
  } catch (err) {
    return {
      matched: false,
      reads: {},
      cap: null,
      error: `condition: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
}

export function evaluateRules(
  rules: readonly CompiledRule[],
  facts: RuleFacts,
  policyOutcome: Outcome,
  lists: ListLookup,
  onError?: (rule: CompiledRule, error: string) => void,
  guard?: RuleGuard,
): RuleVerdict {
  // one activation per environment: rules compiled for the same signal names (all of them, in practice) share it
  const shared: { env: RuleEnvironment | null; activation: Activation | null } = { env: null, activation: null };
  const active: Matched[] = [];
  const shadow: Matched[] = [];
  for (const rule of rules) {
    if (rule.status !== 'active' && rule.status !== 'shadow') continue;
    let result: RuleEvaluation;
    if (guard === undefined || !(rule.cost >= RULE_LIMITS.timedFromCost)) {
      result = evaluateOne(rule, facts, lists, shared);
    } else {
      const started = performance.now();
      result = evaluateOne(rule, facts, lists, shared);
      const ms = performance.now() - started;
      if (ms > RULE_LIMITS.runtimeBudgetMs) {
        result = {
          matched: false,
          reads: {},
          cap: null,
          error: `run time ${ms.toFixed(1)} ms over the budget of ${RULE_LIMITS.runtimeBudgetMs} ms`,
        };
        guard.exceeded(rule, ms);
      } else guard.within(rule);
    }
    if (result.error !== undefined) report(onError, rule, result.error);
    if (!result.matched) continue;
    (rule.status === 'active' ? active : shadow).push({ rule, result });
  }
  const readBudget = { left: MAX_DECISION_READS };
  boundReads(active, readBudget);
  boundReads(shadow, readBudget);
  const outcome = combineOutcome(
    policyOutcome,
    active.map((m) => m.rule),
  );
  let safeAmount = facts.safe_amount;
  for (const m of active) {
    const cap = m.result.cap;
    // a cap only lowers; a policy without a safe amount is capped by the rule alone
    if (cap !== null && Number.isFinite(cap) && cap >= 0 && (safeAmount === null || cap < safeAmount)) safeAmount = cap;
  }
  const activeRules = active.map((m) => m.rule);
  const shadowRules: ShadowMatch[] = shadow.map((m) => ({
    ...shape(m),
    would_be_outcome: combineOutcome(policyOutcome, [...activeRules, m.rule]),
  }));
  return { outcome, rules: active.map(shape), shadow_rules: shadowRules, safe_amount: safeAmount };
}
