// What the signed-in principal may do, so the pages offer only the actions the service would
// admit: the service's own rule (src/auth/authenticate.ts), read from the one table that decides it
// (src/lib/person-roles.ts, imported here as it is: a pure module), never a copy that could drift.
import { personRoleAtLeast, personRoleNeeded } from '../../src/lib/person-roles.ts';
import { isRole, isScope, roleAtLeast } from '../../src/lib/principal.ts';
import { currentSession, hasScope } from './api.ts';

/** Whether a route declaring `scope` (and machine `role`) admits the signed-in principal. */
export function may(scope: string, role?: 'operator' | 'admin'): boolean {
  const session = currentSession();
  if (!session || !isScope(scope)) return false;
  if (session.personRole) return personRoleAtLeast(session.personRole, personRoleNeeded(scope, role));
  return hasScope(scope) && (!role || (isRole(session.role) && roleAtLeast(session.role, role)));
}
