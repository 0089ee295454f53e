// What the console needs to write a rule (docs/api.md, "Rules and lists"): the type-check as one types,
// the variables a condition can read with examples, and each rule's matches per day.
import { Type } from 'typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { defineRoute, ownerFilter, type RouteDefinition } from '../http/route.ts';
import { ApiError, problemResponses } from '../http/problem.ts';
import type { Environment } from '../lib/principal.ts';
import type { Store } from '../store/db.ts';
import { SIGNAL_NAMES } from '../model/policy.ts';
import { checkRule, type RuleBody } from './compile.ts';
import { inspectAst } from './engine-ast.ts';
import { ruleEnvironment } from './cel-env.ts';
import { listKinds } from './list-repository.ts';
import { CheckBody, FieldProblem, StatsQuery } from './schemas.ts';
import { STATS_MAX_ROWS, variables, type RuleStats } from './stats.ts';
import { ruleStatsOff } from './stats-thread.ts';

/** The variables a condition reads, as paths (entity.account_age_days, in_list(…)). */
function readsOf(condition: string): string[] {
  try {
    const inspection = inspectAst(ruleEnvironment(SIGNAL_NAMES).env.parse(condition).ast);
    return [
      ...new Set([
        ...inspection.paths.map((p) => p.key),
        ...inspection.inLists.map((s) => `in_list(${s.list}${s.path ? `, ${s.path.key}` : ''})`),
      ]),
    ];
  } catch {
    return [];
  }
}

const problems = problemResponses(400, 401, 403, 404);

/** Rule statistics a principal may ask for a minute (each reads up to STATS_MAX_ROWS decisions). */
const STATS_PER_MINUTE = 30;

export function ruleAuthoringRoutes({
  store,
  createRateLimit,
}: {
  store: Store;
  createRateLimit: FastifyInstance['createRateLimit'];
}): RouteDefinition[] {
  const db = store.db;
  const tags = ['rules'];
  // The stats read up to STATS_MAX_ROWS decisions, in a worker thread (stats-thread.ts): concurrent
  // asks of one environment and window share one computation, and each principal may ask
  // STATS_PER_MINUTE times a minute, so a client that loops cannot keep the store busy with them.
  const running = new Map<string, Promise<RuleStats>>();
  const statsBudget = createRateLimit({
    max: STATS_PER_MINUTE,
    timeWindow: 60_000,
    keyGenerator: (request) => `rule-stats:${request.principal.id}`,
  });
  const stats = async (request: FastifyRequest, environment: Environment, days: number) => {
    const owner = ownerFilter(request.principal);
    const allowed = await statsBudget(request);
    if (!allowed.isAllowed && allowed.isExceeded) {
      throw new ApiError(
        'rate_limited',
        `At most ${STATS_PER_MINUTE} rule statistics a minute; ask again when the window resets.`,
        { headers: { 'retry-after': String(allowed.ttlInSeconds) } },
      );
    }
    const key = `${environment} ${days} ${owner ?? '*'}`;
    let answer = running.get(key);
    if (!answer) {
      answer = ruleStatsOff(store, environment, days, Date.now(), owner);
      running.set(key, answer);
      void answer.finally(() => running.delete(key)).catch(() => {});
    }
    return answer;
  };

  return [
    defineRoute({
      method: 'POST',
      url: '/api/v1/rules/check',
      config: { scope: 'rules:read', operationId: 'checkRule' },
      schema: {
        tags,
        summary: 'Type-check a condition (and cap) as a save would, without saving: the console checks as one types',
        body: CheckBody,
        response: {
          200: Type.Object({
            valid: Type.Boolean(),
            errors: Type.Array(FieldProblem),
            reads: Type.Array(Type.String()),
          }),
          ...problems,
        },
      },
      handler: async (request) => {
        const { condition, cap } = request.body;
        // A placeholder action: the check is of the expressions, not of whether the rule does something yet.
        const body: RuleBody = { name: 'check', condition, ...(cap !== undefined ? { cap } : { action: 'review' }) };
        const errors = checkRule(body, SIGNAL_NAMES, await listKinds(db, request.principal.environment)).filter(
          (p) => p.field === 'condition' || p.field === 'cap',
        );
        return { valid: errors.length === 0, errors, reads: errors.length === 0 ? readsOf(condition) : [] };
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/rules/variables',
      config: { scope: 'rules:read', operationId: 'listRuleVariables' },
      schema: {
        tags,
        summary:
          "What a condition can read, with types, descriptions and an example from the environment's most recent score decision",
        response: {
          200: Type.Object({
            data: Type.Array(
              Type.Object({
                name: Type.String(),
                type: Type.String(),
                description: Type.String(),
                example: Type.Optional(Type.Unknown()),
              }),
            ),
          }),
          ...problems,
        },
      },
      handler: async (request) => ({
        data: await variables(db, request.principal.environment, SIGNAL_NAMES, ownerFilter(request.principal)),
      }),
    }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/rules/stats',
      config: { scope: 'rules:read', operationId: 'getRuleStats' },
      schema: {
        tags,
        summary: 'Matches and shadow matches per rule per UTC day over the last `days` (default 30, at most 90)',
        description: `Read from the score decisions of the window with a matched or shadow-matched rule, newest first, at most ${STATS_MAX_ROWS.toLocaleString('en')} of them (truncated: true when the window held more); scored counts every score decision per day. At most ${STATS_PER_MINUTE} a minute per caller (429 with Retry-After beyond). Requires the \`rules:read\` scope (an API key must have been issued with it).`,
        querystring: StatsQuery,
        response: {
          200: Type.Object({
            since: Type.String(),
            until: Type.String(),
            decisions_read: Type.Integer(),
            truncated: Type.Boolean(),
            scored: Type.Array(Type.Object({ day: Type.String(), decisions: Type.Integer() })),
            data: Type.Array(
              Type.Object({
                rule_id: Type.String(),
                name: Type.String(),
                days: Type.Array(
                  Type.Object({ day: Type.String(), matched: Type.Integer(), shadow_matched: Type.Integer() }),
                ),
              }),
            ),
          }),
          ...problemResponses(429),
          ...problems,
        },
      },
      handler: async (request) => stats(request, request.principal.environment, request.query.days ?? 30),
    }),
  ];
}
