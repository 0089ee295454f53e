// What the operator should ask for next. Pure.
//
// An item is listed only when it is a sensible next question for this dispute AND some answer
// to it would change the outcome: the recommendation, or whether its confidence is high
// (≥ HIGH_CONFIDENCE). That second part is checked by re-running the decision with each possible
// answer, so the list never asks for evidence that could not matter. A mechanically clear case
// asks for nothing.
import type { DisputeEvidence, DisputeInput, MissingEvidence, MissingEvidenceCode, Recommendation } from './types.ts';

/** The confidence from which a decision counts as mechanically clear (docs/risk-flags.md). */
export const HIGH_CONFIDENCE = 0.9;

/** The evidence field each item would fill; null when it only substantiates a field already given. */
export const MISSING_EVIDENCE_FIELDS: Record<MissingEvidenceCode, keyof DisputeEvidence | null> = {
  payment_proof: 'payment_proof_submitted',
  bank_reference: 'bank_reference_matches',
  bank_statement_with_payer_name: 'payer_name_matches',
  seller_receipt_confirmation: 'seller_confirmed_receipt',
  seller_bank_statement: null,
  amount_paid: 'amount_paid',
  reversal_record: 'payment_reversed',
};

const ASK: Record<MissingEvidenceCode, Omit<MissingEvidence, 'code'>> = {
  payment_proof: {
    party: 'buyer',
    message: 'Ask the buyer for proof of the fiat payment (a bank receipt or transfer confirmation).',
  },
  bank_reference: {
    party: 'buyer',
    message:
      "Ask the buyer for the payment's bank reference, to check that it matches this trade rather than another payment.",
  },
  bank_statement_with_payer_name: {
    party: 'buyer',
    message: "Ask the buyer for a bank statement showing the payer's name, to rule out a third-party payment.",
  },
  seller_receipt_confirmation: {
    party: 'seller',
    message: 'Ask the seller to confirm whether the fiat arrived in their account, and how much.',
  },
  seller_bank_statement: {
    party: 'seller',
    message:
      'Ask the seller for a bank statement covering the payment date, showing whether a matching payment arrived.',
  },
  amount_paid: {
    party: 'trade',
    message: 'Establish the amount actually paid, from the payment proof or the bank statement.',
  },
  reversal_record: {
    party: 'seller',
    message: "Ask the seller for the bank's record of the reversal (chargeback or recall notice) for this payment.",
  },
};

export interface Outcome {
  recommendation: Recommendation;
  confidence: number;
}

const outcomeClass = (o: Outcome): string =>
  o.recommendation === 'manual_review'
    ? 'manual'
    : `${o.recommendation}:${o.confidence >= HIGH_CONFIDENCE ? 'high' : 'normal'}`;

/** Items worth asking for in this dispute, before checking that an answer could matter. */
function candidates(input: DisputeInput): MissingEvidenceCode[] {
  const e = input.evidence ?? {};
  const out: MissingEvidenceCode[] = [];
  if (e.payment_proof_submitted === undefined) out.push('payment_proof');
  // a buyer who admits having no proof has nothing for a reference or statement to check
  if (e.payment_proof_submitted !== false) {
    if (e.bank_reference_matches === undefined) out.push('bank_reference');
    if (e.payer_name_matches === undefined) out.push('bank_statement_with_payer_name');
    if (e.seller_confirmed_receipt === undefined) out.push('seller_receipt_confirmation');
  }
  if (e.payment_proof_submitted === true && e.seller_confirmed_receipt === false) out.push('seller_bank_statement');
  if (input.reason === 'wrong_amount' && e.amount_paid === undefined) out.push('amount_paid');
  if (input.reason === 'payment_reversed' && e.payment_reversed === undefined) out.push('reversal_record');
  return out;
}

/** The answers an item could bring, as evidence patches. */
function answers(code: MissingEvidenceCode, input: DisputeInput): DisputeEvidence[] {
  const field = MISSING_EVIDENCE_FIELDS[code];
  // the seller's statement either shows the payment (as good as a confirmation) or upholds the denial
  if (field === null) return [{ seller_confirmed_receipt: true }];
  if (field === 'amount_paid') return [{ amount_paid: input.trade.amount }, { amount_paid: input.trade.amount * 0.2 }];
  return [{ [field]: true }, { [field]: false }];
}

export function missingEvidence(
  input: DisputeInput,
  current: Outcome,
  mechanicallyClear: boolean,
  decide: (input: DisputeInput) => Outcome,
): MissingEvidence[] {
  if (mechanicallyClear) return [];
  const now = outcomeClass(current);
  return candidates(input)
    .filter((code) =>
      answers(code, input).some(
        (patch) => outcomeClass(decide({ ...input, evidence: { ...input.evidence, ...patch } })) !== now,
      ),
    )
    .map((code) => ({ code, ...ASK[code] }));
}
