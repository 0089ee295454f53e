// The risk-flag catalogue: stable codes and the operator-facing "why it matters" text.
// The analyser supplies what it saw; this file supplies why an operator should care, so the
// reasoning stays identical across disputes and can be documented once (docs/risk-flags.md).
// The rules that raise the flags (analyser.ts, party-history.ts, rules.ts) share its helpers.

export type Severity = 'low' | 'medium' | 'high' | 'critical';
export type FlagParty = 'buyer' | 'seller' | 'trade';
export type Side = 'buyer' | 'seller';

export interface RiskFlag {
  code: FlagCode;
  severity: Severity;
  party: FlagParty;
  message: string;
}

const FLAG_WHY = {
  payer_name_mismatch:
    'The fiat came from someone other than the buyer: a third-party payment, the classic triangulation-fraud ' +
    'pattern (a scammer sells goods to a victim, has the victim pay the seller, and takes the crypto). The victim ' +
    'will later reverse the payment, so the crypto must not be released on this payment.',
  payment_reversed:
    'A reversed fiat payment means the seller no longer holds the money, so releasing the crypto would make the ' +
    'seller pay twice.',
  bank_reference_mismatch:
    'A reference that does not match the trade is typical of edited or recycled payment screenshots and of ' +
    'payments made for a different trade.',
  no_payment_proof: "Without proof of payment the buyer's claim rests on their word alone.",
  seller_confirmed_receipt: 'A seller who admits receiving the fiat has no valid reason to keep the crypto in escrow.',
  amount_mismatch:
    'A short payment does not settle the trade; an overpayment is a known lure for "refund the difference" scams ' +
    'followed by a reversal.',
  prior_lost_disputes: 'Disputes lost before are the best predictor of another bad-faith claim or of non-performance.',
  prior_fraudulent_losses:
    'Disputes lost for a fake payment proof, a third-party payment, an underpayment or no payment at all show ' +
    'that this party has already tried the very frauds an escrow dispute is used for.',
  prior_fraud_reports: "Fraud reports from other users make this party's statements less credible.",
  prior_chargebacks: 'Past chargebacks or reversals are the strongest predictor of another reversal after release.',
  blocklisted_party: 'The marketplace has blocklisted this party; its claims should not decide a release on their own.',
  linked_to_flagged_entity:
    'Shared phones, bank accounts, e-mails or devices with flagged entities are typical of mule networks and ' +
    'multi-account fraud rings.',
  unresponsive_party:
    'A party that stops answering cannot substantiate its side; going silent is common in scams that wait for an ' +
    'automatic resolution.',
  amount_above_history:
    "A trade far larger than the party's usual amounts is typical of account takeover or a one-off exit scam.",
  new_account: 'New accounts have no track record and are cheap for fraudsters to create and abandon.',
  fast_dispute:
    'Bank transfers can take minutes to hours to arrive; a dispute opened this early may be premature or a ' +
    'pressure tactic.',
  // The score is the party's for this trade (docs/disputes.md): its record with this trade's amount,
  // payment method and counterparty, which is why it can differ from a plain score without them.
  high_risk_party:
    'The counterparty-risk model rates this party as risky for this trade, from what it knows of the party together ' +
    "with this trade's amount, payment method and counterparty.",
  // Escrow rules (docs/risk-flags.md, "Rules"): each says why the rule decides the way it does.
  underpayment:
    'An underpaid order is not released: the buyer must pay the rest or be refunded, so the crypto goes back to ' +
    'the seller and a partial payment never buys the whole amount.',
  reversal_after_confirmation:
    'A reversal cancels the earlier confirmation: the seller no longer holds the money, and a loss after a ' +
    "release would be the seller's, so the crypto goes back to the seller.",
  contested_payment:
    'One of the two is mistaken or lying, and only bank records can settle it: reputation never decides a ' +
    'contested payment.',
  trade_expired_unpaid:
    "A trade not paid within its payment window is closed in the seller's favour: there is no payment for the " +
    'escrow to settle.',
  buyer_unresponsive:
    'A buyer who stays silent without showing any payment has not substantiated one; the order is cancelled and ' +
    'the crypto goes back to the seller.',
  payment_not_marked:
    'The buyer neither marked the trade as paid nor showed proof of payment, so there is no payment for the ' +
    'escrow to settle.',
} as const;

export type FlagCode = keyof typeof FLAG_WHY;
export const FLAG_CODES = Object.keys(FLAG_WHY) as FlagCode[];

const SEVERITY_RANK: Record<Severity, number> = { critical: 0, high: 1, medium: 2, low: 3 };
const PARTY_RANK: Record<FlagParty, number> = { buyer: 0, seller: 1, trade: 2 };

function flagMessage(code: FlagCode, observed: string): string {
  return `${observed} ${FLAG_WHY[code]}`;
}

/** Critical first, then by code; party and message break ties so the output is stable. */
export function compareFlags(a: RiskFlag, b: RiskFlag): number {
  return (
    SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity] ||
    (a.code < b.code ? -1 : a.code > b.code ? 1 : 0) ||
    PARTY_RANK[a.party] - PARTY_RANK[b.party] ||
    (a.message < b.message ? -1 : a.message > b.message ? 1 : 0)
  );
}

/** One additive term of the model. Positive log-odds favour the buyer. */
export interface Contribution {
  factor: string;
  party: FlagParty;
  /** evidence: about the payment itself; conduct: behaviour in this dispute; history: the party's record */
  kind: 'evidence' | 'conduct' | 'history';
  logOdds: number;
}

interface Flag extends RiskFlag {
  /** the side this flag weakens; critical flags against the favoured side force a review */
  against: Side | null;
}

export interface Findings {
  contributions: Contribution[];
  flags: Flag[];
  releaseBlocked: boolean;
  affirmativePayment: boolean;
}

export function add(
  acc: Findings,
  factor: string,
  party: FlagParty,
  kind: Contribution['kind'],
  logOdds: number,
): void {
  if (logOdds !== 0) acc.contributions.push({ factor, party, kind, logOdds });
}

export function raise(
  acc: Findings,
  code: FlagCode,
  severity: Severity,
  party: FlagParty,
  against: Side | null,
  seen: string,
): void {
  acc.flags.push({ code, severity, party, against, message: flagMessage(code, seen) });
}

export const finite = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/** Sign of a fact that counts against `side`: against the buyer lowers the buyer's log-odds. */
export function toward(side: Side): number {
  return side === 'buyer' ? -1 : 1;
}
