// What the console's API client answers with besides data (docs/api.md, "Errors", "Four eyes"): a
// problem as the pages show it, a change held for a second person, and the query strings it sends.
import type { Change } from './people-types.ts';

/** An RFC 9457 problem (or a network failure) as the pages show it. */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly errors: { field: string; message: string }[] = [],
    /** the problem's extension members (e.g. an activation's operating_point) */
    readonly extra: Record<string, unknown> = {},
    /** seconds from Retry-After (a 429), when the answer had it */
    readonly retryAfter?: number,
  ) {
    super(detail);
  }
}

/**
 * A 202 with a pending change: four eyes holds the request (activating a rule or a policy, deleting
 * a list) until a second person approves it. Thrown so no page takes it for the change applied.
 */
export class HeldForApproval extends ApiProblem {
  constructor(readonly change: Change) {
    super(202, 'pending_approval', "Waiting for a second person's approval.");
  }
}

/** Whether a JSON body is a pending change (a 202 of four eyes), not some other accepted work. */
export function isChange(body: unknown): body is Change {
  const b = body as Partial<Change> | null;
  return typeof b?.id === 'string' && b.id.startsWith('chg_') && typeof b.kind === 'string';
}

/** Builds a query string from the set members of `params`. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}
