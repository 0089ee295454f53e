// What the audit-log and four-eyes suites share: API keys made by the bootstrap admin, calls
// with them, and the log read back over HTTP.
import assert from 'node:assert/strict';
import { bearer, type TestContext } from '../helpers/app.ts';
import { SCOPES, type Environment, type Role } from '../../src/lib/principal.ts';

export interface Key {
  id: string;
  key: string;
  name: string;
}

export async function makeKey(
  ctx: TestContext,
  name: string,
  role: Role,
  scopes: readonly string[] = SCOPES,
  environment: Environment = 'live',
): Promise<Key> {
  const res = await ctx.inject({
    method: 'POST',
    url: '/api/v1/keys',
    headers: bearer(await ctx.token()),
    payload: { name, role, scopes, environment },
  });
  assert.equal(res.statusCode, 201, res.body);
  const body = res.json() as { id: string; key: string };
  return { id: body.id, key: body.key, name };
}

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export function caller(ctx: () => TestContext) {
  return (k: Key, method: Method, url: string, payload?: unknown) =>
    ctx().inject({
      method,
      url,
      headers: { 'x-api-key': k.key },
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });
}

export interface Entry {
  id: string;
  at: string;
  actor: { type: string; id: string; name: string };
  action: string;
  target: string | null;
  before?: Record<string, unknown>;
  after?: Record<string, unknown>;
  hash: string;
  prev_hash: string;
}

/** Every entry the key may read that the query selects, following next_cursor. */
export async function readLog(ctx: TestContext, k: Key, query = ''): Promise<Entry[]> {
  const out: Entry[] = [];
  let cursor: string | null = null;
  do {
    const sep = query ? '&' : '';
    const url: string = `/api/v1/audit-log?${query}${sep}limit=200${cursor ? `&cursor=${cursor}` : ''}`;
    const res = await ctx.inject({ method: 'GET', url, headers: { 'x-api-key': k.key } });
    assert.equal(res.statusCode, 200, res.body);
    const page = res.json() as { data: Entry[]; next_cursor: string | null };
    out.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return out;
}
