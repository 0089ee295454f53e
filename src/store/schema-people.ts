// Row types of the people tables (migration 034_people): users, their sessions, the audit log and
// the changes waiting for a second person. Times are epoch milliseconds.

export interface UsersTable {
  id: string;
  email: string;
  name: string;
  role: string;
  status: string;
  password_hash: string | null;
  invitation_digest: string | null;
  invitation_expires_at: number | null;
  failed_logins: number;
  locked_until: number | null;
  /** sealed TOTP secrets (035_totp): the confirmed one, and one being enrolled */
  totp_secret: string | null;
  totp_pending: string | null;
  totp_enabled_at: number | null;
  /** the last 30-second step a code was accepted at: a code works once */
  totp_last_step: number | null;
  /** JSON array of the unused recovery codes' SHA-256 digests */
  recovery_codes: string | null;
  created_at: number;
  /** the actor who invited the user, as JSON */
  created_by: string;
  updated_at: number;
}

export interface UserSessionsTable {
  id: string;
  user_id: string;
  token_digest: string;
  csrf_digest: string;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
  revoked_at: number | null;
}

export interface AuditLogTable {
  seq: number;
  id: string;
  environment: string;
  at: number;
  actor: string;
  actor_id: string;
  action: string;
  target: string | null;
  before: string | null;
  after: string | null;
  prev_hash: string;
  hash: string;
}

export interface PendingChangesTable {
  id: string;
  environment: string;
  kind: string;
  target: string;
  payload: string | null;
  requested_by: string;
  requested_by_id: string;
  status: string;
  created_at: number;
  expires_at: number;
  decided_by: string | null;
  decided_at: number | null;
  note: string | null;
}
