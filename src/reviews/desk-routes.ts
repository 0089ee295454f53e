// GET /api/v1/desk/day (docs/api.md, "Reviews"): the desk's day for the console's dashboard, in the
// caller's environment; a machine client without admin sees only its own decisions and reviews
// (ownerFilter), a person every client's. The figures read the window's decisions and reviews (and
// the rule statistics, off the event loop): asks of one environment, window and owner that arrive
// while one is computed share it, and each principal may ask PER_MINUTE times a minute.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Store } from '../store/db.ts';
import { defineRoute, ownerFilter, type RouteDefinition } from '../http/route.ts';
import { ApiError, problemResponses } from '../http/problem.ts';
import { deskDay } from './desk-day.ts';
import { DeskDaySchema, type DeskDay } from './desk-schemas.ts';

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
          ...problemResponses(400, 401, 403, 429),
        },
      },
      handler: async (request) => {
        const allowed = await budget(request);
        if (!allowed.isAllowed && allowed.isExceeded)
          throw new ApiError('rate_limited', `At most ${PER_MINUTE} a minute; ask again when the window resets.`, {
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
