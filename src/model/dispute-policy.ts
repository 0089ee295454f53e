// Dispute-analysis section of the policy document. Owned by the dispute analyser.
// Embedded by the policy loader as the `dispute` member, so it stays a plain, closed object.
import { Type, type Static } from 'typebox';

// Weights are magnitudes (≥ 0): the analyser fixes each factor's direction, so a bad policy
// file can change how much a fact counts but never make fraud evidence favour the fraudster.
const weight = (description: string) => Type.Number({ minimum: 0, maximum: 20, description });

const DisputeWeightsSchema = Type.Object(
  {
    paymentProof: weight('buyer submitted payment proof (towards buyer)'),
    noPaymentProof: weight('buyer explicitly has no payment proof (towards seller)'),
    bankReferenceMatch: weight('bank reference matches the trade (towards buyer)'),
    bankReferenceMismatch: weight('bank reference does not match (towards seller)'),
    payerNameMatch: weight('payer name matches the buyer (towards buyer)'),
    payerNameMismatch: weight('third-party payer (towards seller)'),
    sellerConfirmedReceipt: weight('seller confirmed receiving the fiat (towards buyer)'),
    sellerDeniedReceipt: weight('seller states the fiat did not arrive (towards seller)'),
    paymentReversed: weight('the fiat payment was reversed (towards seller)'),
    amountMatch: weight('amount paid equals the trade amount (towards buyer)'),
    amountShort: weight('amount paid is below the trade amount (towards seller)'),
    unresponsive: weight('a party stopped answering (against that party)'),
    fastDispute: weight('dispute opened very soon after payment (against the opener)'),
    priorLostDispute: weight('per dispute previously lost, up to countCap (against the party)'),
    // Optional so that policy documents written before it stay valid (fraudulentLossWeight).
    priorFraudulentLoss: Type.Optional(
      weight(
        'per dispute lost for fake proof, third-party payment, underpayment or no payment, up to countCap, on top of priorLostDispute (against the party)',
      ),
    ),
    priorFraudReport: weight('per fraud report, up to countCap (against the party)'),
    priorChargeback: weight('per chargeback or reversal, up to countCap (against the party)'),
    blocklisted: weight('party is blocklisted (against the party)'),
    linkedFlaggedEntity: weight('per linked flagged entity, up to countCap (against the party)'),
    newAccount: weight('party is new or unknown (against the party)'),
    amountAboveHistory: weight("trade far above the party's own history (against the party)"),
    highRiskParty: weight("party's risk score is high or critical (against the party)"),
  },
  { additionalProperties: false },
);

export const DisputePolicySchema = Type.Object(
  {
    confidenceFloor: Type.Number({ minimum: 0, maximum: 1 }),
    unresponsiveMinutes: Type.Number({ exclusiveMinimum: 0 }),
    fastDisputeMinutes: Type.Number({ minimum: 0 }),
    amountTolerance: Type.Number({ minimum: 0, maximum: 1 }),
    amountSpikeZ: Type.Number({ exclusiveMinimum: 0 }),
    amountHistoryMinTrades: Type.Integer({ minimum: 2 }),
    amountMinLogSd: Type.Number({ exclusiveMinimum: 0 }),
    newAccountDays: Type.Number({ minimum: 0 }),
    highRiskScore: Type.Number({ minimum: 0, maximum: 100 }),
    criticalRiskScore: Type.Number({ minimum: 0, maximum: 100 }),
    countCap: Type.Integer({ minimum: 1, maximum: 100 }),
    conflictPenalty: Type.Number({ minimum: 0, maximum: 1 }),
    highFlagConfidenceCap: Type.Number({ minimum: 0, maximum: 1 }),
    reviewConfidenceCap: Type.Number({ minimum: 0, maximum: 1 }),
    // Added with the escrow rules (v2). Optional so that policy documents written before them
    // stay valid; an absent member takes the default below (see disputeSettings).
    paymentWindowMinutes: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: 10_080,
        description: 'a trade not marked paid this long after creation has expired unpaid',
      }),
    ),
    clearCaseConfidence: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1,
        description: 'confidence of a mechanically clear case (reversal, underpayment, unpaid or silent party)',
      }),
    ),
    claimConfidence: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1,
        description:
          "confidence of a rule that rests on one party's claim (a reversal or short payment not yet evidenced)",
      }),
    ),
    weights: DisputeWeightsSchema,
  },
  { additionalProperties: false },
);
export type DisputePolicy = Static<typeof DisputePolicySchema>;

const DEFAULT_FRAUDULENT_LOSS_WEIGHT = 0.8;

/** The weight of a dispute lost for fraud, the default for policies that predate it. */
export function fraudulentLossWeight(policy: DisputePolicy): number {
  return policy.weights.priorFraudulentLoss ?? DEFAULT_FRAUDULENT_LOSS_WEIGHT;
}

export const DEFAULT_DISPUTE_POLICY: DisputePolicy = {
  confidenceFloor: 0.7,
  unresponsiveMinutes: 120,
  fastDisputeMinutes: 15,
  amountTolerance: 0.005,
  amountSpikeZ: 3,
  amountHistoryMinTrades: 5,
  // all-equal history has zero variance; a floor keeps z finite and tolerates ~±25 % jitter
  amountMinLogSd: 0.25,
  newAccountDays: 30,
  highRiskScore: 60,
  criticalRiskScore: 85,
  countCap: 3,
  conflictPenalty: 0.5,
  highFlagConfidenceCap: 0.85,
  reviewConfidenceCap: 0.5,
  paymentWindowMinutes: 30,
  clearCaseConfidence: 0.95,
  claimConfidence: 0.8,
  weights: {
    paymentProof: 0.75,
    noPaymentProof: 1.5,
    bankReferenceMatch: 1,
    bankReferenceMismatch: 2,
    payerNameMatch: 0.75,
    payerNameMismatch: 3,
    sellerConfirmedReceipt: 4,
    sellerDeniedReceipt: 1,
    paymentReversed: 6,
    amountMatch: 0.5,
    amountShort: 2,
    unresponsive: 0.75,
    fastDispute: 0.4,
    priorLostDispute: 0.6,
    priorFraudulentLoss: DEFAULT_FRAUDULENT_LOSS_WEIGHT,
    priorFraudReport: 1,
    priorChargeback: 0.8,
    blocklisted: 2.5,
    linkedFlaggedEntity: 0.75,
    newAccount: 0.3,
    amountAboveHistory: 0.5,
    highRiskParty: 0.75,
  },
};

export type DisputeRuleSettings = Required<
  Pick<DisputePolicy, 'paymentWindowMinutes' | 'clearCaseConfidence' | 'claimConfidence'>
>;

/** The v2 rule settings with the defaults filled in for policies that predate them. */
export function disputeSettings(policy: DisputePolicy): DisputeRuleSettings {
  return {
    paymentWindowMinutes: policy.paymentWindowMinutes ?? 30,
    clearCaseConfidence: policy.clearCaseConfidence ?? 0.95,
    claimConfidence: policy.claimConfidence ?? 0.8,
  };
}
