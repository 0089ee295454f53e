// GET /api/v1/audit-log (docs/api.md, "Audit log"): who changed what, newest first, filtered by
// actor, action and time. The entries of the caller's environment only; the chain itself runs
// through both environments, which is why `vouch audit verify` (cli.ts), not this page, checks it.
import { Type, type Static } from 'typebox';
import type { Selectable } from 'kysely';
import { defineRoute, type RouteDefinition } from '../http/route.ts';
import { problemResponses } from '../http/problem.ts';
import { parseTime } from '../http/validation.ts';
import { nextCursor, pageOf } from '../lib/pagination.ts';
import type { Store } from '../store/db.ts';
import type { AuditLogTable } from '../store/schema-people.ts';
import { AuditEntrySchema, parseActor } from './schemas.ts';
import { auditEntries } from './repository.ts';

const AuditQuery = Type.Object(
  {
    actor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description: "the actor's id: a user, a client, an API key, or cli",
      }),
    ),
    action: Type.Optional(
      Type.String({
        pattern: '^[a-z_]+(\\.[a-z_]+)*(\\.\\*)?$',
        maxLength: 64,
        description: 'an action (rule.updated), or every action of a kind (rule.*)',
      }),
    ),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'entries at or after this time' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'entries before this time' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
    cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,16}$', description: 'the next_cursor of the page before' })),
  },
  { additionalProperties: false },
);

const problems = problemResponses(400, 401, 403);

/** Stored JSON (before/after) back to its value; a member only when the entry has it. */
const json = (text: string | null): { value?: unknown } =>
  text === null ? {} : { value: JSON.parse(text) as unknown };

function entryView(row: Selectable<AuditLogTable>): Static<typeof AuditEntrySchema> {
  const before = json(row.before);
  const after = json(row.after);
  return {
    id: row.id,
    at: new Date(Number(row.at)).toISOString(),
    actor: parseActor(row.actor),
    action: row.action,
    target: row.target,
    ...('value' in before ? { before: before.value } : {}),
    ...('value' in after ? { after: after.value } : {}),
    hash: row.hash,
    prev_hash: row.prev_hash,
  };
}

export function auditLogRoutes({ store }: { store: Store }): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET',
      url: '/api/v1/audit-log',
      // Every person reads it, a viewer included (docs/api.md, "People"); of machines, admins only.
      config: { scope: 'audit:read', role: 'admin', operationId: 'listAuditLog' },
      schema: {
        tags: ['audit'],
        summary: 'The audit log: every change by a person or a client, newest first',
        querystring: AuditQuery,
        response: {
          200: Type.Object({
            data: Type.Array(AuditEntrySchema),
            next_cursor: Type.Union([Type.String(), Type.Null()]),
          }),
          ...problems,
        },
      },
      handler: async (request) => {
        const { actor, action, since, until, limit = 50, cursor } = request.query;
        const from = parseTime(since, 'since');
        const to = parseTime(until, 'until');
        const rows = await auditEntries(
          store.db,
          {
            environment: request.principal.environment,
            actor,
            action,
            from,
            to,
            beforeSeq: cursor === undefined ? undefined : Number(cursor),
          },
          limit,
        );
        const page = pageOf(rows, limit);
        return { data: page.rows.map(entryView), next_cursor: nextCursor(page, (last) => String(last.seq)) };
      },
    }),
  ];
}
