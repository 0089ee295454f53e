// The API's shapes (CONTRACT §4–§10) as far as the console reads them.
export interface Signal {
  name: string;
  value: number;
  weight: number;
  description?: string;
}
export interface ScoreResult {
  entity_id: string;
  score: number;
  risk_level: string;
  signals: Signal[];
  decision_id: string;
  policy_version: string;
  scored_at: string;
  safe_amount?: number | null;
  cached?: boolean;
}
export interface Flag {
  code: string;
  severity: 'low' | 'medium' | 'high' | 'critical';
  party: string;
  message: string;
}
export interface Party {
  entity_id: string;
  score: number;
  risk_level: string;
  safe_amount?: number | null;
}
export interface DisputeResult {
  dispute_id: string;
  analysis_id: string;
  recommendation: 'release_to_buyer' | 'return_to_seller' | 'manual_review';
  confidence: number;
  risk_flags: Flag[];
  parties: { buyer: Party; seller: Party };
  missing_evidence?: { code: string; party: string; message: string }[];
  policy_version: string;
}
export interface Label {
  decision_id: string;
  label: 'fraud' | 'legit';
  source: string;
  labelled_at: string;
  labelled_by: string;
}
export interface Decision {
  id: string;
  kind: string;
  subject_id: string;
  principal_id?: string;
  result: unknown;
  policy_version: string;
  created_at: string;
  label?: Label | null;
  features?: Record<string, number>;
}
export const isDispute = (d: Decision): boolean => d.kind.startsWith('dispute');
export const LEVELS = ['low', 'medium', 'high', 'critical'] as const;
export const SEVERITIES = ['critical', 'high', 'medium', 'low'] as const;
