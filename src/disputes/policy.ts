// Dispute-analysis section of the policy document. Owned by the dispute analyser.
import { Type, type Static } from 'typebox';

export const DisputePolicySchema = Type.Object(
  {
    confidenceFloor: Type.Number({ minimum: 0, maximum: 1 }),
    unresponsiveMinutes: Type.Number({ exclusiveMinimum: 0 }),
  },
  { additionalProperties: false },
);
export type DisputePolicy = Static<typeof DisputePolicySchema>;

export const DEFAULT_DISPUTE_POLICY: DisputePolicy = {
  confidenceFloor: 0.7,
  unresponsiveMinutes: 120,
};
