// Dispute analysis: an explainable evidence-weighing model under a layer of escrow rules.
// Pure — no I/O, no clock.
//
// Every fact adds log-odds for "the buyer validly paid" (positive) or against it (negative).
// σ(Σ) is the buyer probability; its distance from ½, shrunk when the evidence conflicts and
// capped by serious flags against the favoured side, is the confidence. The model's hard rules
// can only turn its decision into manual_review, never produce a release. The escrow rules
// (rules.ts) then decide the cases platforms decide mechanically (a reversal, an underpayment,
// a trade never paid, a silent party) and send a contested payment to a human.
import { disputeSettings, type DisputePolicy } from '../model/dispute-policy.ts';
import { compareFlags, type Contribution, type Findings, type RiskFlag, type Severity, type Side } from './flags.ts';
import { weighHistory } from './party-history.ts';
import { applyEscrowRules, type EscrowRuleName } from './escrow-rules.ts';
import { weighEvidence } from './evidence-weighing.ts';
import { HIGH_CONFIDENCE, missingEvidence } from './evidence.ts';
import type { DisputeAnalysis, DisputeInput, Parties, Recommendation } from './types.ts';

export { DISPUTE_REASONS } from '../model/dispute-reasons.ts';
export {
  MISSING_EVIDENCE_CODES,
  type DisputeAnalysis,
  type DisputeEvidence,
  type DisputeInput,
  type Parties,
  type PartyAssessment,
} from './types.ts';

export interface DisputeExplanation {
  analysis: DisputeAnalysis;
  logOdds: number;
  buyerProbability: number;
  contributions: Contribution[];
  /** why the recommendation is manual_review; empty when a decision was made */
  reviewReasons: string[];
  /** the escrow rule that decided, or null when the weighing of the evidence did */
  rule: EscrowRuleName | null;
}

const round3 = (x: number): number => Math.round(x * 1000) / 1000;

type Decision = Omit<DisputeExplanation, 'analysis'> & {
  analysis: Omit<DisputeAnalysis, 'missing_evidence'>;
  mechanicallyClear: boolean;
};

/** The evidence model followed by the escrow rules; everything but the missing-evidence list. */
function decide(input: DisputeInput, parties: Parties, policy: DisputePolicy, now: number): Decision {
  const acc: Findings = { contributions: [], flags: [], releaseBlocked: false, affirmativePayment: false };
  weighEvidence(input, policy, now, acc);
  weighHistory('buyer', parties.buyer, input.trade, policy, now, acc);
  weighHistory('seller', parties.seller, input.trade, policy, now, acc);

  let pro = 0;
  let con = 0;
  for (const c of acc.contributions) {
    if (c.logOdds > 0) pro += c.logOdds;
    else con -= c.logOdds;
  }
  const logOdds = pro - con;
  const p = 1 / (1 + Math.exp(-logOdds));
  const favoured: Side | null = logOdds > 0 ? 'buyer' : logOdds < 0 ? 'seller' : null;

  // Strong evidence on both sides means someone is lying; the net sum alone would hide that.
  const conflict = pro > 0 && con > 0 ? Math.min(pro, con) / Math.max(pro, con) : 0;
  let confidence = 0.5 + (Math.max(p, 1 - p) - 0.5) * (1 - policy.conflictPenalty * conflict);
  const against = (sev: Severity) => acc.flags.some((f) => f.severity === sev && f.against === favoured);
  if (favoured !== null && against('high')) confidence = Math.min(confidence, policy.highFlagConfidenceCap);

  let reviewReasons: string[] = [];
  if (favoured === null) reviewReasons.push('the evidence is balanced');
  if (favoured === 'buyer' && acc.releaseBlocked) reviewReasons.push('a hard rule forbids releasing to the buyer');
  // Reputation alone never moves escrow: each outcome needs evidence about this payment.
  if (favoured === 'buyer' && !acc.affirmativePayment) reviewReasons.push('no proof or confirmation of payment');
  // Nor does it overrule a seller who is answering and denies being paid: that is a person's call
  // (the contested_payment rule says so for a matching proof; weaker proof must not do better).
  const sellerMinutes = input.evidence?.seller_response_minutes;
  const sellerAnswering = !(
    typeof sellerMinutes === 'number' &&
    Number.isFinite(sellerMinutes) &&
    sellerMinutes > policy.unresponsiveMinutes
  );
  if (favoured === 'buyer' && input.evidence?.seller_confirmed_receipt === false && sellerAnswering) {
    reviewReasons.push('a responsive seller denies receiving the payment');
  }
  if (favoured === 'seller' && !acc.contributions.some((c) => c.kind === 'evidence' && c.logOdds < 0)) {
    reviewReasons.push('no evidence against the payment');
  }
  if (favoured !== null && against('critical')) reviewReasons.push(`a critical flag weighs against the ${favoured}`);
  if (reviewReasons.length > 0) confidence = Math.min(confidence, policy.reviewConfidenceCap);
  const modelRelease = reviewReasons.length === 0 && favoured === 'buyer';

  // The escrow rules read the model's flags, so they run after it and before the sort.
  const outcome = applyEscrowRules(input, policy, now, acc);
  let recommendation: Recommendation | null = null;
  if (outcome !== null) {
    const settings = disputeSettings(policy);
    reviewReasons = outcome.reviewReason === undefined ? [] : [outcome.reviewReason];
    if (outcome.basis === 'review') {
      confidence = Math.min(confidence, policy.reviewConfidenceCap);
    } else if (outcome.basis === 'claim') {
      confidence = settings.claimConfidence;
    } else if (outcome.recommendation === 'release_to_buyer') {
      // never below what the model alone would give, so that worse evidence against the buyer
      // can never raise the confidence of a release by making the rule stop applying
      confidence = Math.max(settings.clearCaseConfidence, modelRelease ? confidence : 0);
      if (outcome.capped) confidence = Math.min(confidence, policy.highFlagConfidenceCap);
    } else {
      confidence = settings.clearCaseConfidence;
    }
    recommendation = outcome.recommendation;
  }

  confidence = round3(Math.min(1, Math.max(0, confidence)));
  // compared after rounding so the reported confidence and the decision always agree
  if (reviewReasons.length === 0 && confidence < policy.confidenceFloor)
    reviewReasons.push('confidence below the floor');
  if (reviewReasons.length > 0 || (recommendation === null && favoured === null)) recommendation = 'manual_review';
  recommendation ??= favoured === 'buyer' ? 'release_to_buyer' : 'return_to_seller';

  const risk_flags = acc.flags
    .map(({ code, severity, party, message }): RiskFlag => ({ code, severity, party, message }))
    .sort(compareFlags);
  return {
    analysis: { recommendation, confidence, risk_flags },
    logOdds,
    buyerProbability: p,
    contributions: acc.contributions,
    reviewReasons,
    rule: outcome?.rule ?? null,
    mechanicallyClear:
      outcome?.basis === 'clear' && recommendation !== 'manual_review' && confidence >= HIGH_CONFIDENCE,
  };
}

export function explainDispute(
  input: DisputeInput,
  parties: Parties,
  policy: DisputePolicy,
  now: number,
): DisputeExplanation {
  const { mechanicallyClear, analysis, ...rest } = decide(input, parties, policy, now);
  const missing_evidence = missingEvidence(
    input,
    analysis,
    mechanicallyClear,
    (alt) => decide(alt, parties, policy, now).analysis,
  );
  return { ...rest, analysis: { ...analysis, missing_evidence } };
}

export function analyseDispute(
  input: DisputeInput,
  parties: Parties,
  policy: DisputePolicy,
  now: number,
): DisputeAnalysis {
  return explainDispute(input, parties, policy, now).analysis;
}
