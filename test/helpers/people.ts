// People in tests (docs/api.md, "People"): invite one through the API as the bootstrap admin,
// accept the invitation, and sign in to a console session (cookie + CSRF) or for an access token.
import type { LightMyRequestResponse } from 'fastify';
import type { TestContext } from './app.ts';

export interface Person {
  id: string;
  email: string;
  password: string;
  /** the console session: Cookie header and the CSRF token */
  cookie: string;
  csrf: string;
}

let counter = 0;

export function sessionCookieOf(res: LightMyRequestResponse): string {
  const set = res.headers['set-cookie'];
  const first = (Array.isArray(set) ? set[0] : set) ?? '';
  return first.split(';')[0]!;
}

export async function person(
  ctx: TestContext,
  role: 'viewer' | 'analyst' | 'operator' | 'admin',
  adminToken?: string,
): Promise<Person> {
  const token = adminToken ?? (await ctx.token());
  const email = `person-${++counter}-${Date.now()}@desk.example`;
  const password = `correct horse ${counter} battery`;
  const invited = await ctx.inject({
    method: 'POST',
    url: '/api/v1/users',
    headers: { authorization: `Bearer ${token}` },
    payload: { email, name: `Person ${counter}`, role },
  });
  if (invited.statusCode !== 201) throw new Error(`invite: ${invited.statusCode} ${invited.body}`);
  const { id, invitation } = invited.json() as { id: string; invitation: { token: string } };
  const accepted = await ctx.inject({
    method: 'POST',
    url: '/api/v1/auth/invitations/accept',
    payload: { token: invitation.token, password },
  });
  if (accepted.statusCode !== 200) throw new Error(`accept: ${accepted.statusCode} ${accepted.body}`);
  const login = await ctx.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password } });
  if (login.statusCode !== 200) throw new Error(`login: ${login.statusCode} ${login.body}`);
  return { id, email, password, cookie: sessionCookieOf(login), csrf: login.json().csrf_token as string };
}

/** Headers of a console request by `p` (the CSRF token on every request: harmless on a GET). */
export const asPerson = (p: Pick<Person, 'cookie' | 'csrf'>) => ({ cookie: p.cookie, 'x-csrf-token': p.csrf });
