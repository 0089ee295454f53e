// GET /api/v1/desk/day (docs/api.md, "Reviews"): the desk's day for the console's dashboard, in the
// caller's environment; a machine client without admin sees only its own decisions and reviews
// (ownerFilter), a person every client's. The figures read the window's decisions and reviews (and
// the rule statistics, off the event loop): asks of one environment, window and owner that arrive
// while one is computed share it, and each principal may ask PER_MINUTE times a minute.
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { Store } from '../store/db.ts';
import { defineRoute, ownerFilter, type RouteDefinition } from '../http/route.ts';
import { ApiError, ProblemSchema } from '../http/problem.ts';
import { STATS_MAX_ROWS } from '../rules/stats.ts';
import { deskDay } from './desk-day.ts';

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T, description: string) =>
  Type.Union([t, Type.Null()], { description });
const Count = (description: string) => Type.Integer({ minimum: 0, description });
const share = (description: string) => nullable(Type.Number({ minimum: 0, maximum: 1 }), description);

const DaySchema = Type.Object({
  day: Type.String({ description: 'the UTC day, YYYY-MM-DD' }),
  approve: Count('score decisions of the day with this outcome'),
  review: Count('score decisions of the day with this outcome'),
  hold: Count('score decisions of the day with this outcome'),
  decline: Count('score decisions of the day with this outcome'),
  fraud_caught: Count("the day's decisions labelled fraud that were declined, outright or by their review's decline"),
  fraud_money_passed: Type.Record(Type.String(), Type.Number(), {
    description:
      "currency → the amount of the day's decisions labelled fraud that were approved, outright or by their review",
  }),
  legit_declined: Count("the day's decisions labelled legit that were declined, outright or by their review's decline"),
  reviews_opened: Count('reviews opened that day'),
  reviews_resolved: Count('reviews resolved that day'),
  resolved_late: Count('of those, resolved after their due_at'),
  median_minutes_to_resolve: nullable(Type.Number(), "opened to resolved, over the day's resolutions; null when none"),
  open_at_end: Count('unresolved reviews at the end of the day (now, for today)'),
});

const DeskDaySchema = Type.Object({
  since: Type.String({ format: 'date-time', description: 'the first UTC midnight of the window' }),
  until: Type.String({ format: 'date-time' }),
  days: Type.Array(DaySchema, { description: 'every UTC day of the window, oldest first' }),
  backlog: Type.Object({
    open: Count('unresolved reviews now'),
    overdue: Count('unresolved and past due_at'),
    resolved: Count('reviews resolved in the window'),
    median_minutes_to_resolve: nullable(Type.Number(), "opened to resolved, over the window's resolutions"),
    resolved_on_time_share: share("the window's resolutions made by their due_at; null when none"),
  }),
  top_rules: Type.Array(
    Type.Object({ rule_id: Type.String(), name: Type.String(), hits: Count('score decisions it matched') }),
    { description: 'the active rules that matched most in the window, at most 10, most first' },
  ),
  rules_truncated: Type.Boolean({
    description: `the window held more than ${STATS_MAX_ROWS.toLocaleString('en')} decisions with a matched rule: the hits count the newest`,
  }),
  analysts: Type.Array(
    Type.Object({
      id: Type.String({ description: 'the principal who resolved: a user id, a client id or an API key id' }),
      name: Type.String({ description: "the person's or the client's (key's) name; the id when unknown" }),
      type: Type.Union([Type.Literal('user'), Type.Literal('client')]),
      resolved: Count('reviews they resolved in the window'),
      median_minutes: nullable(Type.Number(), 'opened to their verdict, median'),
      checked: Count('of their resolutions, those whose decision was later labelled by an event or the API'),
      agreement: share('the share of those whose label agreed with the verdict (decline ↔ fraud); null when none'),
    }),
    { description: 'who resolved reviews in the window, most first, at most 100' },
  ),
});

export type DeskDay = Static<typeof DeskDaySchema>;

const DeskQuery = Type.Object(
  { days: Type.Optional(Type.Integer({ minimum: 1, maximum: 90, default: 30 })) },
  { additionalProperties: false },
);

const PER_MINUTE = 30;

export function deskRoutes({
  store,
  createRateLimit,
}: {
  store: Store;
  createRateLimit: FastifyInstance['createRateLimit'];
}): RouteDefinition[] {
  const running = new Map<string, Promise<DeskDay>>();
  const budget = createRateLimit({
    max: PER_MINUTE,
    timeWindow: 60_000,
    keyGenerator: (request) => `desk-day:${request.principal.id}`,
  });
  return [
    defineRoute({
      method: 'GET',
      url: '/api/v1/desk/day',
      config: { scope: 'reviews:read', operationId: 'getDeskDay' },
      schema: {
        tags: ['reviews'],
        summary: "The desk's day per UTC day of the last `days` (default 30, at most 90): outcomes, fraud, reviews",
        description: `Per day: outcomes; fraud caught (labelled fraud, declined outright or by a review), fraud money passed by currency (labelled fraud, approved outright or by a review) and legit declined; reviews opened, resolved, resolved late and the median time to resolve; the backlog at the day's end. The backlog now; the top 10 rules by matches (from the rule statistics); each analyst's resolutions, median time and agreement with later event or API labels. Over the decisions and reviews the caller may see; at most ${PER_MINUTE} a minute per caller (429 with Retry-After beyond). Requires the \`reviews:read\` scope (an API key must have been issued with it).`,
        querystring: DeskQuery,
        response: {
          200: DeskDaySchema,
          400: ProblemSchema,
          401: ProblemSchema,
          403: ProblemSchema,
          429: ProblemSchema,
        },
      },
      handler: async (request) => {
        const allowed = await budget(request);
        if (!allowed.isAllowed && allowed.isExceeded)
          throw new ApiError(429, 'rate_limited', `At most ${PER_MINUTE} a minute; ask again when the window resets.`, {
            headers: { 'retry-after': String(allowed.ttlInSeconds) },
          });
        const { environment } = request.principal;
        const owner = ownerFilter(request.principal);
        const days = request.query.days ?? 30;
        const key = `${environment} ${days} ${owner ?? '*'}`;
        let answer = running.get(key);
        if (!answer) {
          answer = deskDay(store, environment, owner, days, Date.now());
          running.set(key, answer);
          void answer.finally(() => running.delete(key)).catch(() => {});
        }
        return answer;
      },
    }),
  ];
}
