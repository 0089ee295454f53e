// What a score hands its rules (docs/rules.md, "Variables"), built from what the score already
// computed: no query, no second pass over the profile. Also the part of it a decision stores as
// `rule_inputs` (what the features, the request and the result do not already hold, in the short
// form of model/stored-rule-inputs.ts), so a rule can be replayed on a stored decision exactly, and
// the review a decision's outcome opens.
import type { Policy, SignalName } from '../model/policy.ts';
import { newAccountsOf } from '../model/new-accounts.ts';
import { decideByMoney } from '../model/economics.ts';
import { outcomesOf, reviewHoursOf, reviewSampleRateOf } from '../model/outcome-policy.ts';
import type { ReviewOpening } from '../audit/decisions.ts';
import { newId } from '../lib/ids.ts';
import type { Decider, EntityFacts, Outcome, RuleFacts, RuleVerdict } from '../model/outcomes.ts';
import type { Environment } from '../lib/principal.ts';
import type { EntityProfile, RiskLevel, ScoreRequest, ScoreResult } from '../model/types.ts';
import { accountAgeDays, shortRuleInputs, summaryContextOf } from '../model/stored-rule-inputs.ts';

const HOUR_MS = 3_600_000;

/** Non-finite or negative counts from a damaged profile read as zero, as the model reads them. */
const count = (x: number | undefined): number => (x !== undefined && Number.isFinite(x) && x > 0 ? x : 0);

/**
 * The entity as rules read it: the plain (undecayed) counts of its recorded history, and its age
 * since Vouch first saw it (0 for an entity never seen; the request's account_created_at is in
 * `context`, for a rule that trusts it).
 */
export function entityFacts(profile: EntityProfile, now: number): EntityFacts {
  const first =
    profile.known && profile.firstSeenAt !== null && Number.isFinite(profile.firstSeenAt) ? profile.firstSeenAt : null;
  return {
    account_age_days: accountAgeDays(first, now),
    completed_trades: count(profile.tradesCompleted),
    chargebacks: count(profile.chargebacks),
    fraud_reports: count(profile.fraudReports),
    disputes_lost: count(profile.disputesLost),
    first_seen_at: first === null ? null : new Date(first).toISOString(),
  };
}

/** The amount over the currency's reference amount (the new-account tiers'), or null when the currency has none. */
export function amountRef(policy: Policy, amount: number, currency: string): number | null {
  const { referenceAmounts } = newAccountsOf(policy);
  return Object.hasOwn(referenceAmounts, currency) ? amount / referenceAmounts[currency]! : null;
}

/**
 * Everything a rule condition reads for this score; `values` (every signal of the policy, zeros included) is used as
 * is.
 */
function ruleFacts(
  profile: EntityProfile,
  request: ScoreRequest,
  policy: Policy,
  result: ScoreResult,
  values: Record<SignalName, number>,
  safeAmount: number | null,
  now: number,
): RuleFacts {
  return {
    entity_id: request.entity_id,
    amount: request.amount,
    currency: request.currency,
    amount_ref: amountRef(policy, request.amount, request.currency),
    context: request.context,
    entity: entityFacts(profile, now),
    signals: values,
    score: result.score,
    risk_level: result.riskLevel,
    safe_amount: safeAmount,
  };
}

/** The policy's outcome for a risk level (its `outcomes` map, defaults filled in). */
function policyOutcome(policy: Policy, level: RiskLevel): Outcome {
  return outcomesOf(policy)[level];
}

/**
 * The decision's rule columns. `rule_inputs` holds what a replay needs beyond the stored features,
 * request and result: `{amount_ref, context, entity, safe_amount}` (the policy's safe amount,
 * before any rule's cap), less what the row holds (model/stored-rule-inputs.ts): the request
 * summary's context members, the entity's age at the decision's time (`created_at` is `now`), the
 * answered safe amount when no rule capped it.
 */
function ruleColumns(facts: RuleFacts, verdict: RuleVerdict, now: number) {
  return {
    outcome: verdict.outcome,
    rules: verdict.rules.length > 0 ? JSON.stringify(verdict.rules) : null,
    shadow_rules: verdict.shadow_rules.length > 0 ? JSON.stringify(verdict.shadow_rules) : null,
    rule_inputs: shortRuleInputs(facts, {
      summaryContext: summaryContextOf(facts.context),
      answeredSafeAmount: verdict.safe_amount,
      createdAt: now,
    }),
  };
}

/**
 * The review a decision opens (docs/api.md, "Reviews"): every review or hold, due after the
 * policy's review time for it; and an approval drawn with the policy's review_sample_rate
 * (reason 'sample', due as a review), so labels also come from what nothing flagged.
 * `random` is injectable for tests.
 */
export function reviewOpening(
  policy: Policy,
  outcome: Outcome,
  now: number,
  random: () => number = Math.random,
): ReviewOpening | null {
  if (outcome === 'review' || outcome === 'hold') {
    return {
      id: newId('rev'),
      outcome,
      reason: 'outcome',
      sample_rate: null,
      due_at: now + reviewHoursOf(policy)[outcome] * HOUR_MS,
    };
  }
  if (outcome !== 'approve') return null;
  const rate = reviewSampleRateOf(policy);
  if (rate <= 0 || !(random() < rate)) return null;
  return {
    id: newId('rev'),
    outcome: 'approve',
    reason: 'sample',
    sample_rate: rate,
    due_at: now + reviewHoursOf(policy).review * HOUR_MS,
  };
}

/** What a score computed before its rules run. */
export interface Scored {
  profile: EntityProfile;
  request: ScoreRequest;
  policy: Policy;
  result: ScoreResult;
  values: Record<SignalName, number>;
  /** the policy's safe amount, before any rule's cap */
  safeAmount: number | null;
}

/**
 * A score's outcome (docs/rules.md): the policy's for the level, then the environment's rules,
 * which may make it more severe (or approve it, by override) and cap the safe amount, never raise
 * it; with the rule columns and the review the decision stores.
 */
export function decideOutcome(decider: Decider, environment: Environment, scored: Scored, now: number) {
  const { profile, request, policy, result, values, safeAmount } = scored;
  const facts = ruleFacts(profile, request, policy, result, values, safeAmount, now);
  // with economics, the policy's outcome is the one of least expected cost (docs/api.md, "Decisions by money")
  const money = policy.economics
    ? decideByMoney(
        policy.economics,
        policy.bias,
        result.signals,
        request.amount,
        request.currency,
        newAccountsOf(policy).referenceAmounts,
      )
    : undefined;
  const verdict = decider.decide(environment, facts, money?.outcome ?? policyOutcome(policy, result.riskLevel), now);
  return {
    verdict,
    money,
    columns: ruleColumns(facts, verdict, now),
    review: reviewOpening(policy, verdict.outcome, now),
  };
}
