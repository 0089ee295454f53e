// What a person may do (docs/api.md, "People", the table of roles): viewer reads every decision,
// review, rule, list and policy of the environment; analyst also works reviews and labels; operator
// also writes rules, lists and policies, fits and backtests, scores and ingests; admin also manages
// users, clients, keys, webhooks, the network and settings. Routes declare a scope and a machine
// role (service < operator < admin); a person's requirement is derived from those, so one table of
// routes serves both, and a route added later is closed to people below operator unless it only reads.
import { SCOPES, type Role, type Scope } from './principal.ts';

export const PERSON_ROLES = ['viewer', 'analyst', 'operator', 'admin'] as const;
export type PersonRole = (typeof PERSON_ROLES)[number];

const RANK: Record<PersonRole, number> = { viewer: 0, analyst: 1, operator: 2, admin: 3 };

export function isPersonRole(value: unknown): value is PersonRole {
  return typeof value === 'string' && (PERSON_ROLES as readonly string[]).includes(value);
}

export function personRoleAtLeast(role: PersonRole, floor: PersonRole): boolean {
  return RANK[role] >= RANK[floor];
}

/** The desk's own work on reviews and labels: an analyst's. */
const ANALYST_SCOPES: ReadonlySet<Scope> = new Set(['reviews:write', 'labels:write']);
/** Machines, secrets and the deployment's connections: an admin's. */
const ADMIN_SCOPES: ReadonlySet<Scope> = new Set([
  'users:read',
  'users:write',
  'settings:read',
  'settings:write',
  'keys:read',
  'keys:write',
  'webhooks:read',
  'webhooks:write',
  'network:admin',
]);
const READ_SCOPES: ReadonlySet<Scope> = new Set([
  'audit:read',
  'policy:read',
  'rules:read',
  'reviews:read',
  'trust:read',
]);

/**
 * The least person role a route of `scope` and machine `role` admits, or the route's own `person`
 * floor where its scope alone says too little: scoring is declared `trust:read`, which machines
 * that only score hold, yet it makes a decision, so a person scores from operator up. The audit
 * log is declared admin for machines and read by every person (a viewer audits too).
 */
export function personRoleNeeded(scope: Scope, role: Role | undefined, person?: PersonRole): PersonRole {
  if (person !== undefined) return person;
  if (scope === 'audit:read') return 'viewer';
  if (role === 'admin' || ADMIN_SCOPES.has(scope)) return 'admin';
  if (ANALYST_SCOPES.has(scope)) return 'analyst';
  if (role === 'operator' || !READ_SCOPES.has(scope)) return 'operator';
  return 'viewer';
}

/** The scopes a person of `role` holds (what an access token of theirs says). */
export function personScopes(role: PersonRole): Scope[] {
  return SCOPES.filter((s) => personRoleAtLeast(role, personRoleNeeded(s, undefined)));
}

/** The machine role a person's principal carries, for the code that reads it (ownership, job turns). */
export function machineRoleOf(role: PersonRole): Role {
  return role === 'admin' ? 'admin' : role === 'viewer' ? 'service' : 'operator';
}
