// What a score decides on top of its estimate (docs/rules.md): the outcome and the rules that made
// it. Trust owns only these shapes and the seam (`Decider`); the rules themselves live in
// src/rules, above trust, and are handed to the scoring service by the composition root, so trust
// never imports the feature that builds on it.
import type { Environment } from '../lib/principal.ts';

export const OUTCOMES = ['approve', 'review', 'hold', 'decline'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** How severe an outcome is: the most severe of the policy's and the matched rules' wins. */
export const OUTCOME_SEVERITY: Readonly<Record<Outcome, number>> = { approve: 0, review: 1, hold: 2, decline: 3 };

/** The entity facts a rule reads as `entity.*` (docs/rules.md, "Variables"). */
export interface EntityFacts {
  account_age_days: number;
  completed_trades: number;
  chargebacks: number;
  fraud_reports: number;
  disputes_lost: number;
  /** ISO 8601, or null for an entity never seen */
  first_seen_at: string | null;
}

/** Everything a rule condition can read, as one score saw it (and as a stored decision keeps it). */
export interface RuleFacts {
  entity_id: string;
  amount: number;
  currency: string;
  /** the amount over the currency's reference amount, or null when the currency has none */
  amount_ref: number | null;
  /** the request's context as sent (absent members stay absent) */
  context: Record<string, unknown>;
  entity: EntityFacts;
  /** every signal of the policy by name → its value (0 when not present) */
  signals: Record<string, number>;
  score: number;
  risk_level: string;
  /** the policy's safe amount, before any rule's cap */
  safe_amount: number | null;
}

/** A rule that matched, as a score response and its stored decision show it. */
export interface MatchedRule {
  id: string;
  name: string;
  version: number;
  /** null for a rule that only caps */
  action: Outcome | null;
  override?: boolean;
  final?: boolean;
  /** the cap it set, in the request's currency, when it has one */
  cap?: number | null;
  /** the variables its condition read, with their values */
  reads: Record<string, unknown>;
}

/** A shadow rule that matched: stored on the decision, never changing its outcome. */
export interface ShadowMatch extends MatchedRule {
  /** the outcome the decision would have had had this rule been active */
  would_be_outcome: Outcome;
}

export interface RuleVerdict {
  outcome: Outcome;
  rules: MatchedRule[];
  shadow_rules: ShadowMatch[];
  /** the least of the policy's safe amount and the matched rules' caps */
  safe_amount: number | null;
}

/** The rules of each environment, as the composition root hands them to scoring (src/rules). */
export interface Decider {
  /**
   * Changes whenever a rule or list of the environment changes, on any instance, or a list entry
   * expires: part of the score cache key, so no cached score outlives a change.
   */
  revision(environment: Environment, now: number): string;
  /** Never throws: a rule whose condition fails at run time is a rule that did not match. */
  decide(environment: Environment, facts: RuleFacts, policyOutcome: Outcome, now: number): RuleVerdict;
}

/** Scoring without rules: the policy's outcome and its safe amount. */
export const POLICY_ONLY: Decider = {
  revision: () => '0',
  decide: (_environment, facts, policyOutcome) => ({
    outcome: policyOutcome,
    rules: [],
    shadow_rules: [],
    safe_amount: facts.safe_amount,
  }),
};
