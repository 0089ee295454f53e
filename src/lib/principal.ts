// Who is calling, what they may do, and the role/scope rules that stop privilege escalation.

export const SCOPES = [
  'keys:read',
  'keys:write',
  'trust:read',
  'trust:write',
  'dispute:analyze',
  'audit:read',
  'labels:write',
  'policy:read',
  'policy:write',
  'webhooks:read',
  'webhooks:write',
  'network:admin',
  'rules:read',
  'rules:write',
  'reviews:read',
  'reviews:write',
  'users:read',
  'users:write',
  'settings:read',
  'settings:write',
] as const;
export type Scope = (typeof SCOPES)[number];

export const ROLES = ['service', 'operator', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/**
 * The data partition a caller works in (docs/api.md, "Integration" test mode): `vch_test_` keys and test clients see
 * only test data.
 */
export const ENVIRONMENTS = ['live', 'test'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

export function isEnvironment(value: unknown): value is Environment {
  return value === 'live' || value === 'test';
}

const RANK: Record<Role, number> = { service: 0, operator: 1, admin: 2 };

export interface Principal {
  /** client_id for a JWT, key id for an API key, user id for a person: what rate limits and audit records name */
  id: string;
  /** a machine (client token or API key) or a person (docs/api.md, "People": session or user token) */
  kind: 'client' | 'api_key' | 'user';
  /** a person's name, shown with what they did */
  name?: string;
  /** a person's role (person-roles.ts); the route check uses it instead of `role` */
  personRole?: 'viewer' | 'analyst' | 'operator' | 'admin';
  /** the client that owns this principal (itself for a JWT) */
  clientId: string;
  role: Role;
  scopes: ReadonlySet<string>;
  /** every data row the caller reads or writes belongs to this environment */
  environment: Environment;
}

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

export function roleAtMost(role: Role, ceiling: Role): boolean {
  return RANK[role] <= RANK[ceiling];
}

export function roleAtLeast(role: Role, floor: Role): boolean {
  return RANK[role] >= RANK[floor];
}

/**
 * Scopes whose routes must also declare a role of at least operator (docs/api.md, "Scopes and roles"):
 * checked when routes register, so a new route cannot forget it.
 */
export const OPERATOR_SCOPES: ReadonlySet<Scope> = new Set<Scope>([
  'policy:write',
  'webhooks:write',
  'network:admin',
  'rules:write',
  'reviews:write',
  'users:write',
  'settings:write',
]);

export function parseScopes(stored: string): string[] {
  return stored.split(' ').filter(Boolean);
}

/** Who did something, as every change names it (docs/api.md, "People"): a person or a machine client. */
export interface Actor {
  type: 'user' | 'client';
  id: string;
  name: string;
}

/** The actor a principal acts as: a person by their user id and name; a client or API key by its id. */
export function actorOf(p: Principal): Actor {
  return p.kind === 'user'
    ? { type: 'user', id: p.id, name: p.name ?? p.id }
    : { type: 'client', id: p.id, name: p.name ?? p.id };
}
