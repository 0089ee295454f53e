// One request to the service with a credential, and its refusal as an ApiProblem: the transport
// under api.ts, which decides which credential to send and what to do when it is refused.
import { ApiProblem } from './api-problems.ts';

/** What a request carries: a client's bearer token, or a person's CSRF token (the session is the cookie). */
export type Credential =
  { kind: 'client'; clientId: string; clientSecret: string; token: string } | { kind: 'person'; csrf: string };

/** Methods that change nothing, so need no CSRF token. */
const SAFE = new Set(['GET', 'HEAD']);

/** Sends `json` (a body already encoded as JSON, or none) to `path` with the credential's headers. */
export async function send(
  method: string,
  path: string,
  json: string | undefined,
  auth: Credential | undefined,
  accept = 'application/json',
): Promise<Response> {
  const headers: Record<string, string> = { accept };
  if (json !== undefined) headers['content-type'] = 'application/json';
  if (auth?.kind === 'client') headers.authorization = `Bearer ${auth.token}`;
  if (auth?.kind === 'person' && auth.csrf && !SAFE.has(method)) headers['x-csrf-token'] = auth.csrf;
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: json,
      // a client's token is its only credential; a person's session is the cookie (and a sign-in sets it)
      credentials: auth?.kind === 'client' ? 'omit' : 'same-origin',
      cache: 'no-store',
    });
  } catch {
    throw new ApiProblem(0, 'network', 'The service could not be reached. Check the connection and retry.');
  }
  if (res.ok) return res;
  let problem: {
    code?: string;
    detail?: string;
    title?: string;
    errors?: { field: string; message: string }[];
    [k: string]: unknown;
  } = {};
  try {
    problem = (await res.json()) as typeof problem;
  } catch {
    // not a problem document (e.g. a proxy's page): fall back to the status line
  }
  const retry = Number(res.headers.get('retry-after'));
  throw new ApiProblem(
    res.status,
    problem.code ?? 'error',
    problem.detail ?? problem.title ?? `${res.status} ${res.statusText}`,
    problem.errors ?? [],
    problem,
    Number.isFinite(retry) && retry > 0 ? retry : undefined,
  );
}
