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
import { activationFor, type Activation, type RuleEnvironment } from './cel-env.ts';
import { EVALUATE_WITH, type CompiledRule, type ListLookup, type RuleEvaluation } from './compile.ts';

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

export function evaluateRules(
  rules: readonly CompiledRule[],
  facts: RuleFacts,
  policyOutcome: Outcome,
  lists: ListLookup,
  onError?: (rule: CompiledRule, error: string) => void,
): RuleVerdict {
  // one activation per environment: rules compiled for the same signal names (all of them, in practice) share it
  let lastEnv: RuleEnvironment | null = null;
  let lastActivation: Activation | null = null;
  const active: Matched[] = [];
  const shadow: Matched[] = [];
  for (const rule of rules) {
    if (rule.status !== 'active' && rule.status !== 'shadow') continue;
    let result: RuleEvaluation;
    const internal = EVALUATE_WITH.get(rule);
    if (!internal) {
      result = rule.evaluate(facts, lists);
    } else {
      try {
        if (internal.renv !== lastEnv || lastActivation === null) {
          lastEnv = internal.renv;
          lastActivation = activationFor(internal.renv, facts);
        }
        result = internal.run(lastActivation, lists);
      } catch (err) {
        result = {
          matched: false,
          reads: {},
          cap: null,
          error: `condition: ${err instanceof Error ? err.message : String(err)}`,
        };
      }
    }
    if (result.error !== undefined) report(onError, rule, result.error);
    if (!result.matched) continue;
    (rule.status === 'active' ? active : shadow).push({ rule, result });
  }
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
