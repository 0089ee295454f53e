// The shapes of people, the audit log and four eyes on the wire (docs/api.md, "People", "Audit log",
// "Four eyes"), written out here until the SDK's generated types (sdk/src/schema.d.ts) carry them;
// then they should come from types.ts like the rest.

import { PERSON_ROLES, type PersonRole } from '../../src/lib/person-roles.ts';

// the service's own list of roles, not a copy
export { PERSON_ROLES, type PersonRole };

/** What each role may do, as the invitation form and the users page explain it (docs/api.md, the table of roles). */
export const ROLE_MAY: Record<PersonRole, string> = {
  viewer: 'reads every decision, review, rule, list, policy, entity and the audit log',
  analyst: 'a viewer who also works reviews and labels decisions',
  operator: 'an analyst who also writes rules, lists and policies and approves changes',
  admin: 'an operator who also manages people, API clients, keys, webhooks, the network and settings',
};

export interface User {
  id: string;
  email: string;
  name: string;
  role: PersonRole;
  status: 'invited' | 'active' | 'deactivated';
  /** a second factor (TOTP) is on */
  second_factor?: boolean;
  created_at: string;
  /** who invited them, named as now; null for a person single sign-on created */
  invited_by?: Actor | null;
}

export interface Invited extends User {
  /** the one-time link (and its token), shown once */
  invitation: { url: string; token: string; expires_at: string };
}

/** POST /api/v1/auth/login for a console session. */
export interface LoginResponse {
  user: User;
  csrf_token: string;
  expires_at: string;
}

/** GET /api/v1/auth/session: who is calling. */
export interface SessionInfo {
  actor: Actor;
  role: string;
  scopes: string[];
  /** a console session's fresh CSRF token */
  csrf_token?: string;
}

interface Actor {
  type: 'user' | 'client';
  id: string;
  name: string;
}

export interface AuditEntry {
  id: string;
  at: string;
  actor: Actor;
  action: string;
  target: string | null;
  before?: unknown;
  after?: unknown;
  hash: string;
  prev_hash: string;
}

export const CHANGE_KINDS = ['rule_activation', 'policy_activation', 'list_deletion'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];
export const FOUR_EYES_AREAS = ['rules', 'policies', 'lists'] as const;
export type FourEyesArea = (typeof FOUR_EYES_AREAS)[number];

/** A change held for a second person (four eyes). */
export interface Change {
  id: string;
  kind: ChangeKind;
  status: 'pending' | 'approved' | 'rejected' | 'expired';
  /** rule:<id>, policy:<version> or list:<name> */
  target: string;
  /** what approving applies: the fields of the request that asked for it */
  payload?: unknown;
  requested_by: Actor;
  created_at: string;
  expires_at: string;
  decided_by?: Actor | null;
  decided_at?: string | null;
  note?: string | null;
}
