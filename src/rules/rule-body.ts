// A rule's body as it is stored (docs/rules.md, "Rules"): the fields given, in a fixed order, and
// a patch's fields laid over the current body. Pure: the repository and the four-eyes applier
// shape bodies with it before they write.
import type { RuleBody } from './compile.ts';
import type { RuleStatus } from './schemas.ts';

export function parseBody(row: { body: string }): RuleBody {
  return JSON.parse(row.body) as RuleBody;
}

/** The stored body: only the fields given, in a fixed order. */
export function storedBody(body: RuleBody): RuleBody {
  const out: RuleBody = { name: body.name, condition: body.condition };
  if (body.action !== undefined && body.action !== null) out.action = body.action;
  if (body.override === true) out.override = true;
  if (body.final === true) out.final = true;
  if (body.cap !== undefined && body.cap !== null) out.cap = body.cap;
  if (body.description !== undefined && body.description !== null) out.description = body.description;
  return out;
}

export interface RulePatch extends Partial<{ [K in keyof RuleBody]: RuleBody[K] | null }> {
  status?: RuleStatus;
}

/** The body a patch gives the rule: the fields given replace the current ones (null clears one). */
export function patchedBody(current: { body: string }, fields: Omit<RulePatch, 'status'>): RuleBody {
  const merged = { ...parseBody(current) } as Record<string, unknown>;
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) merged[k] = v;
  return storedBody(merged as unknown as RuleBody);
}
