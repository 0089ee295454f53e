// The escrow rules: outcomes that P2P platforms reach mechanically, whatever the weighing of the
// evidence says (docs/risk-flags.md, "Rules"). Pure. Every rule that fires raises a flag saying
// what was seen and why it decides; the analyser turns the chosen outcome into a confidence.
import { finite, raise, type Findings } from './flags.ts';
import { disputeSettings, type DisputePolicy } from '../model/dispute-policy.ts';
import type { DisputeInput, Recommendation } from './types.ts';

export type EscrowRuleName =
  | 'payment_reversed'
  | 'third_party_payment'
  | 'underpayment'
  | 'seller_silent_after_payment'
  | 'contested_payment'
  | 'payment_not_marked'
  | 'trade_expired_unpaid'
  | 'buyer_unresponsive';

export interface EscrowRuleOutcome {
  rule: EscrowRuleName;
  recommendation: Recommendation;
  /** clear: mechanically clear; claim: rests on one party's unevidenced claim; review: the facts conflict */
  basis: 'clear' | 'claim' | 'review';
  /** why a human must decide (basis review) */
  reviewReason?: string;
  /** a release while a high flag weighs against the buyer: confidence is capped as in the model */
  capped?: boolean;
}

const MINUTE = 60_000;
const STRENGTH = { clear: 0, claim: 1, review: 2 } as const;

/** A time in the dispute's input as epoch ms, or null when absent or not a time (the analyser weighs what it has). */
export const timeOrNull = (s: string | undefined): number | null => {
  if (s === undefined) return null;
  const t = Date.parse(s);
  return Number.isNaN(t) ? null : t;
};

/** Applies the rules to the findings of the model (whose flags must already be raised). */
export function applyEscrowRules(
  input: DisputeInput,
  policy: DisputePolicy,
  now: number,
  acc: Findings,
): EscrowRuleOutcome | null {
  const e = input.evidence ?? {};
  const settings = disputeSettings(policy);
  const limit = policy.unresponsiveMinutes;
  const silent = (m: number | undefined): m is number => finite(m) && m > limit;
  const { amount, currency: cur } = input.trade;
  const paid = finite(e.amount_paid) ? e.amount_paid : null;
  const short = paid !== null && finite(amount) && paid < amount * (1 - policy.amountTolerance);
  const confirmed = e.seller_confirmed_receipt === true;
  const matchingProof =
    e.payment_proof_submitted === true &&
    (e.bank_reference_matches === true || e.payer_name_matches === true) &&
    e.bank_reference_matches !== false &&
    e.payer_name_matches !== false;
  // anything that says a payment was made; the "no payment" rules need its absence
  const paymentShown =
    e.payment_proof_submitted === true ||
    confirmed ||
    e.bank_reference_matches === true ||
    e.payer_name_matches === true ||
    (paid !== null && paid > 0);
  // read before this function raises its own flags: only the model's findings count here
  const againstBuyer = (sev: string) => acc.flags.some((f) => f.against === 'buyer' && f.severity === sev);
  const buyerCritical = againstBuyer('critical');
  const buyerHigh = againstBuyer('high');
  const out: EscrowRuleOutcome[] = [];

  // A reversal overrides any earlier confirmation: the seller no longer has the money.
  if (e.payment_reversed === true || (input.reason === 'payment_reversed' && e.payment_reversed !== false)) {
    if (confirmed) {
      raise(
        acc,
        'reversal_after_confirmation',
        'critical',
        'trade',
        'buyer',
        e.payment_reversed === true
          ? 'The seller confirmed receiving the fiat, and the payment was then reversed.'
          : `The seller confirmed receiving the fiat, and the ${input.opened_by} now reports it reversed.`,
      );
    }
    out.push({
      rule: 'payment_reversed',
      recommendation: 'return_to_seller',
      basis: e.payment_reversed === true ? 'clear' : 'claim',
    });
  }

  // A third-party payer is refused and the escrow returned (the seller refunds the payer).
  if (e.payer_name_matches === false) {
    out.push({ rule: 'third_party_payment', recommendation: 'return_to_seller', basis: 'clear' });
  }

  // An underpaid order is never released. The seller's own wrong_amount dispute counts as an
  // underpayment claim unless the seller confirmed receiving the full amount.
  const fullyConfirmed = confirmed && paid !== null && !short;
  const sellerClaim = input.reason === 'wrong_amount' && input.opened_by === 'seller' && !fullyConfirmed;
  if (short || sellerClaim) {
    const conflict = confirmed || (!short && paid !== null);
    const seen = short
      ? `The buyer paid ${paid} ${cur} of the ${amount} ${cur} traded${confirmed ? ', although the seller confirmed receiving the payment' : ''}.`
      : paid !== null
        ? `The seller reports a wrong amount, although ${paid} ${cur} of the ${amount} ${cur} traded is reported as paid.`
        : `The seller reports that the buyer paid less than the ${amount} ${cur} traded${confirmed ? ', after confirming receipt' : ''}.`;
    raise(acc, 'underpayment', 'critical', 'trade', 'buyer', seen);
    out.push(
      conflict
        ? {
            rule: 'underpayment',
            recommendation: 'manual_review',
            basis: 'review',
            reviewReason: 'the reported underpayment conflicts with the other facts',
          }
        : { rule: 'underpayment', recommendation: 'return_to_seller', basis: short ? 'clear' : 'claim' },
    );
  }

  const decisive = out.length > 0;
  if (
    !decisive &&
    matchingProof &&
    e.seller_confirmed_receipt !== false &&
    silent(e.seller_response_minutes) &&
    !acc.releaseBlocked &&
    !buyerCritical
  ) {
    // the seller's silence is already flagged (unresponsive_party); nothing new to raise
    out.push({
      rule: 'seller_silent_after_payment',
      recommendation: 'release_to_buyer',
      basis: 'clear',
      capped: buyerHigh,
    });
  }
  if (!decisive && matchingProof && e.seller_confirmed_receipt === false && !silent(e.seller_response_minutes)) {
    raise(
      acc,
      'contested_payment',
      'medium',
      'trade',
      null,
      "The buyer's proof of payment matches the trade; the seller is answering and denies receiving it.",
    );
    out.push({
      rule: 'contested_payment',
      recommendation: 'manual_review',
      basis: 'review',
      reviewReason: 'a matching proof of payment is contested by a responsive seller',
    });
  }

  if (!paymentShown) {
    const unmarked = input.trade.paid_at === undefined;
    if (e.payment_proof_submitted === false && unmarked) {
      raise(
        acc,
        'payment_not_marked',
        'high',
        'buyer',
        'buyer',
        'The buyer has not marked the trade as paid and has no proof of payment.',
      );
      out.push({ rule: 'payment_not_marked', recommendation: 'return_to_seller', basis: 'clear' });
    }
    const created = timeOrNull(input.trade.created_at);
    const opened = timeOrNull(input.opened_at) ?? now;
    const window = settings.paymentWindowMinutes;
    if (unmarked && created !== null && opened - created > window * MINUTE) {
      raise(
        acc,
        'trade_expired_unpaid',
        'high',
        'trade',
        'buyer',
        `The dispute was opened ${Math.round((opened - created) / MINUTE)} minutes after the trade was created, past its ` +
          `${window}-minute payment window, and the trade was never marked as paid.`,
      );
      out.push({ rule: 'trade_expired_unpaid', recommendation: 'return_to_seller', basis: 'clear' });
    }
    if (silent(e.buyer_response_minutes)) {
      raise(
        acc,
        'buyer_unresponsive',
        'high',
        'buyer',
        'buyer',
        `The buyer has not answered for ${Math.round(e.buyer_response_minutes)} minutes (limit ${limit}) and has shown no payment.`,
      );
      out.push({ rule: 'buyer_unresponsive', recommendation: 'return_to_seller', basis: 'clear' });
    }
  }

  // Returning the crypto to the seller beats everything else (each return is a reason on its
  // own); among returns the best-founded one decides, in the order above on a tie.
  const returns = out.filter((o) => o.recommendation === 'return_to_seller');
  if (returns.length > 0) return returns.reduce((best, o) => (STRENGTH[o.basis] < STRENGTH[best.basis] ? o : best));
  return out[0] ?? null;
}
