// Types of the dispute analyser's input and output, shared by the model, the rules and the
// missing-evidence catalogue (kept apart so those modules do not import each other in a cycle).
import type { EntityProfile, RiskLevel, Signal } from '../model/types.ts';
import type { RiskFlag, Side } from './flags.ts';
import type { DISPUTE_REASONS } from '../model/dispute-reasons.ts';

type DisputeReason = (typeof DISPUTE_REASONS)[number];

/** Every member optional: absent means "not provided", never false. */
export interface DisputeEvidence {
  payment_proof_submitted?: boolean;
  bank_reference_matches?: boolean;
  payer_name_matches?: boolean;
  seller_confirmed_receipt?: boolean;
  payment_reversed?: boolean;
  amount_paid?: number;
  buyer_response_minutes?: number;
  seller_response_minutes?: number;
  messages_count?: number;
}

interface DisputeTrade {
  trade_id: string;
  amount: number;
  currency: string;
  payment_method?: string;
  created_at?: string;
  paid_at?: string;
}

export interface DisputeInput {
  dispute_id: string;
  trade: DisputeTrade;
  buyer_id: string;
  seller_id: string;
  opened_by: Side;
  opened_at?: string;
  reason: DisputeReason;
  evidence?: DisputeEvidence;
  context?: Record<string, unknown>;
}

export interface PartyAssessment {
  entityId: string;
  score: number;
  riskLevel: RiskLevel;
  signals: Signal[];
  profile: EntityProfile;
}

export interface Parties {
  buyer: PartyAssessment;
  seller: PartyAssessment;
}

export type Recommendation = 'release_to_buyer' | 'return_to_seller' | 'manual_review';

/** What the operator should ask for next, and from whom. */
export interface MissingEvidence {
  code: MissingEvidenceCode;
  party: 'buyer' | 'seller' | 'trade';
  message: string;
}

export const MISSING_EVIDENCE_CODES = [
  'payment_proof',
  'bank_reference',
  'bank_statement_with_payer_name',
  'seller_receipt_confirmation',
  'seller_bank_statement',
  'amount_paid',
  'reversal_record',
] as const;
export type MissingEvidenceCode = (typeof MISSING_EVIDENCE_CODES)[number];

export interface DisputeAnalysis {
  recommendation: Recommendation;
  /** 0..1, 3 decimals */
  confidence: number;
  risk_flags: RiskFlag[];
  /** empty when no further evidence could change the recommendation or its confidence class */
  missing_evidence: MissingEvidence[];
}
