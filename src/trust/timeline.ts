// GET /api/v1/trust/entities/{entity_id}/events: an entity's events, newest first, for the console's
// timeline (issue 12). Events belong to the client that sent them (events.client_id): a non-admin sees
// only its own client's, an admin sees every client's and the legacy imports stored with client ''.
// Either sees only its own environment's (docs/api.md, "Integration" test mode).
// Each item carries only what its own event carried, never other entities' identifier hashes.
import { defineRoute, ownerFilter, type RouteDefinition } from '../http/route.ts';
import { nextCursor, pageOf } from '../lib/pagination.ts';
import { Type, type Static } from 'typebox';
import type { Store } from '../store/db.ts';
import { problemResponses } from '../http/problem.ts';
import { Invalid, NotFound } from '../lib/domain-errors.ts';
import { EntityId, checkEntityParam } from '../model/identifier-schemas.ts';
import { entityVersion } from '../entities/entity-repository.ts';
import { eventsPage } from '../entities/event-repository.ts';

const problems = problemResponses(400, 401, 403, 404, 429);

const TimelineEvent = Type.Object({
  event_id: Type.String(),
  type: Type.String(),
  occurred_at: Type.String({ format: 'date-time' }),
  amount: Type.Optional(Type.Number()),
  currency: Type.Optional(Type.String()),
  counterparty_id: Type.Optional(Type.String()),
  trade_id: Type.Optional(Type.String()),
  resolution: Type.Optional(Type.String()),
});

const Params = Type.Object({ entity_id: EntityId });
const Query = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, pattern: '^[A-Za-z0-9_-]+$' })),
  },
  { additionalProperties: false },
);

/**
 * Position after which the next page starts: the last item's sort key (client_id breaks ties between clients' equal
 * event ids).
 */
interface Position {
  at: number;
  eventId: string;
  clientId: string;
}

// Opaque to callers: base64url of a JSON triple. Malformed ones are a 400, never a 5xx.
const encodeCursor = (p: Position) => Buffer.from(JSON.stringify([p.at, p.eventId, p.clientId])).toString('base64url');
function decodeCursor(cursor: string): Position {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  if (
    Array.isArray(parsed) &&
    parsed.length === 3 &&
    Number.isSafeInteger(parsed[0]) &&
    typeof parsed[1] === 'string' &&
    typeof parsed[2] === 'string' &&
    parsed[1].length <= 256 &&
    parsed[2].length <= 256
  ) {
    return { at: parsed[0] as number, eventId: parsed[1], clientId: parsed[2] };
  }
  throw new Invalid(
    'Invalid query parameter: cursor is not one this endpoint returned.',
    [{ field: 'cursor', message: 'is not a valid cursor' }],
    'invalid_request',
  );
}

const OPTIONAL = ['counterparty_id', 'trade_id', 'resolution', 'currency'] as const;

/** The timeline fields of a stored payload (canonical JSON of the event as it was sent). */
function item(row: {
  event_id: string;
  type: string;
  occurred_at: number | string;
  payload: string;
}): Static<typeof TimelineEvent> {
  let payload: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(row.payload) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) payload = parsed as Record<string, unknown>;
  } catch {
    // An unreadable payload still shows its type and time.
  }
  const out: Static<typeof TimelineEvent> = {
    event_id: row.event_id,
    type: row.type,
    occurred_at: new Date(Number(row.occurred_at)).toISOString(),
  };
  if (typeof payload.amount === 'number' && Number.isFinite(payload.amount)) out.amount = payload.amount;
  for (const key of OPTIONAL) if (typeof payload[key] === 'string') out[key] = payload[key];
  return out;
}

export function timelineRoutes({
  store,
  requireHashedIds,
}: {
  store: Store;
  requireHashedIds: boolean;
}): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET',
      url: '/api/v1/trust/entities/:entity_id/events',
      config: { scope: 'trust:read' },
      schema: {
        tags: ['trust'],
        summary: "An entity's events, newest first (a non-admin sees its own client's events only)",
        params: Params,
        querystring: Query,
        response: {
          200: Type.Object({ data: Type.Array(TimelineEvent), next_cursor: Type.Union([Type.String(), Type.Null()]) }),
          ...problems,
        },
      },
      handler: async (request) => {
        const id = request.params.entity_id;
        checkEntityParam(id, { requireHashedIds });
        const { limit = 50, cursor } = request.query;
        const after = cursor === undefined ? undefined : decodeCursor(cursor);
        const { environment } = request.principal;
        const entity = await entityVersion(store.db, environment, id);
        if (!entity || Number(entity.version) === 0) throw new NotFound('This entity has no recorded history.');
        const page = pageOf(
          await eventsPage(store.db, environment, id, ownerFilter(request.principal), after, limit + 1),
          limit,
        );
        return {
          data: page.rows.map(item),
          next_cursor: nextCursor(page, (last) =>
            encodeCursor({ at: Number(last.occurred_at), eventId: last.event_id, clientId: last.client_id }),
          ),
        };
      },
    }),
  ];
}
