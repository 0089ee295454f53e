// The facts of the dispute itself (docs/risk-flags.md): the evidence about the payment and the
// parties' conduct in this dispute, each adding log-odds for the buyer or against, and raising its
// flag. The parties' records are weighed apart (party-history.ts).
import type { DisputePolicy } from '../model/dispute-policy.ts';
import { add, finite, raise, toward, type Findings } from './flags.ts';
import { timeOrNull } from './escrow-rules.ts';
import type { DisputeInput } from './types.ts';

const MINUTE = 60_000;

export function weighEvidence(input: DisputeInput, policy: DisputePolicy, now: number, acc: Findings): void {
  const e = input.evidence ?? {};
  const w = policy.weights;

  if (e.payment_proof_submitted === true) {
    add(acc, 'payment_proof_submitted', 'buyer', 'evidence', w.paymentProof);
    acc.affirmativePayment = true;
  } else if (e.payment_proof_submitted === false) {
    add(acc, 'no_payment_proof', 'buyer', 'evidence', -w.noPaymentProof);
    raise(acc, 'no_payment_proof', 'medium', 'buyer', 'buyer', 'The buyer has not submitted any proof of payment.');
  } else if (e.seller_confirmed_receipt !== true) {
    raise(acc, 'no_payment_proof', 'low', 'buyer', null, 'No payment proof has been provided yet.');
  }

  if (e.bank_reference_matches === true) add(acc, 'bank_reference_matches', 'buyer', 'evidence', w.bankReferenceMatch);
  if (e.bank_reference_matches === false) {
    add(acc, 'bank_reference_mismatch', 'buyer', 'evidence', -w.bankReferenceMismatch);
    raise(
      acc,
      'bank_reference_mismatch',
      'high',
      'buyer',
      'buyer',
      "The bank reference on the buyer's payment does not match this trade.",
    );
  }

  // Third-party payment is decided by evidence when present; the reason alone is an allegation
  // that still blocks a release but only carries weight when nothing contradicts it.
  const thirdPartyClaim = input.reason === 'third_party_payment';
  if (e.payer_name_matches === true) add(acc, 'payer_name_matches', 'buyer', 'evidence', w.payerNameMatch);
  if (e.payer_name_matches === false || thirdPartyClaim) {
    acc.releaseBlocked = true;
    if (e.payer_name_matches !== true) add(acc, 'payer_name_mismatch', 'buyer', 'evidence', -w.payerNameMismatch);
    const seen =
      e.payer_name_matches === false
        ? 'The name on the fiat payment does not match the buyer.'
        : e.payer_name_matches === true
          ? `The ${input.opened_by} alleges a third-party payment, although the payer name was reported as matching.`
          : `The ${input.opened_by} reports that the fiat was paid by a third party.`;
    raise(acc, 'payer_name_mismatch', 'critical', 'buyer', 'buyer', seen);
  }

  if (e.seller_confirmed_receipt === true) {
    add(acc, 'seller_confirmed_receipt', 'seller', 'evidence', w.sellerConfirmedReceipt);
    acc.affirmativePayment = true;
    raise(
      acc,
      'seller_confirmed_receipt',
      'low',
      'seller',
      'seller',
      'The seller confirmed receiving the fiat payment.',
    );
  } else if (e.seller_confirmed_receipt === false) {
    add(acc, 'seller_denied_receipt', 'seller', 'evidence', -w.sellerDeniedReceipt);
  }

  const reversalClaim = input.reason === 'payment_reversed';
  if (e.payment_reversed === true || reversalClaim) {
    acc.releaseBlocked = true;
    if (e.payment_reversed !== false) add(acc, 'payment_reversed', 'trade', 'evidence', -w.paymentReversed);
    const seen =
      e.payment_reversed === true
        ? 'The fiat payment for this trade has been reversed.'
        : e.payment_reversed === false
          ? `The ${input.opened_by} alleges a reversed payment, although the evidence says it was not reversed.`
          : `The ${input.opened_by} reports that the fiat payment was reversed.`;
    raise(acc, 'payment_reversed', 'critical', 'trade', 'buyer', seen);
  }

  const amount = input.trade.amount;
  if (finite(e.amount_paid) && finite(amount) && amount > 0) {
    const paid = e.amount_paid;
    const cur = input.trade.currency;
    const pct = Math.round((Math.abs(paid - amount) / amount) * 1000) / 10;
    if (paid < amount * (1 - policy.amountTolerance)) {
      add(acc, 'amount_short', 'trade', 'evidence', -w.amountShort);
      raise(
        acc,
        'amount_mismatch',
        'high',
        'trade',
        'buyer',
        `The buyer paid ${paid} ${cur} against a trade amount of ${amount} ${cur} (${pct}% short).`,
      );
    } else if (paid > amount * (1 + policy.amountTolerance)) {
      raise(
        acc,
        'amount_mismatch',
        'medium',
        'trade',
        null,
        `The buyer paid ${paid} ${cur} against a trade amount of ${amount} ${cur} (${pct}% over).`,
      );
    } else {
      add(acc, 'amount_matches', 'trade', 'evidence', w.amountMatch);
    }
  }

  for (const side of ['buyer', 'seller'] as const) {
    const minutes = e[`${side}_response_minutes`];
    if (finite(minutes) && minutes > policy.unresponsiveMinutes) {
      add(acc, `${side}_unresponsive`, side, 'conduct', toward(side) * w.unresponsive);
      raise(
        acc,
        'unresponsive_party',
        'medium',
        side,
        side,
        `The ${side} has not answered for ${Math.round(minutes)} minutes (limit ${policy.unresponsiveMinutes}).`,
      );
    }
  }

  const paidAt = timeOrNull(input.trade.paid_at);
  const openedAt = timeOrNull(input.opened_at) ?? now;
  if (paidAt !== null) {
    const gap = openedAt - paidAt;
    if (gap >= 0 && gap < policy.fastDisputeMinutes * MINUTE) {
      const opener = input.opened_by;
      add(acc, 'fast_dispute', opener, 'conduct', toward(opener) * w.fastDispute);
      raise(
        acc,
        'fast_dispute',
        'low',
        opener,
        opener,
        `The ${opener} opened the dispute ${Math.round(gap / MINUTE)} minutes after the payment was marked as sent.`,
      );
    }
  }
}
