// /api/v1/webhooks: subscriptions (owned like API keys: a non-admin sees only its own client's,
// anything else is "not found"), their delivery log, and manual retry. A subscription belongs to
// the environment of the principal that created it (test mode): it receives only that
// environment's events, and only principals of that environment, admins included, can see it.
import type { FastifyRequest } from 'fastify';
import { defineRoute, ownerFilter, type RouteDefinition } from '../http/route.ts';
import { nextCursor } from '../lib/pagination.ts';
import { Type } from 'typebox';
import type { Store } from '../store/db.ts';
import type { KeyEncryption } from '../lib/envelope.ts';
import { ApiError, problemResponses } from '../http/problem.ts';
import { newId } from '../lib/ids.ts';
import { checkDestination } from './ssrf.ts';
import { principalAuditor } from '../audit-log/auditor.ts';
import { generateWebhookSecret, sealSecret } from './signer.ts';
import { deleteWebhook, findWebhook, insertWebhookCapped, listWebhooks } from './repository.ts';
import { findDelivery, listDeliveries, scheduleRetry } from './delivery-repository.ts';
import {
  CreateWebhookBody,
  CreatedWebhook,
  DeliveryRecord,
  ListQuery,
  WebhookRecord,
  toDeliveryRecord,
  toWebhookRecord,
} from './schemas.ts';
import type { DeliveryWorker } from './worker.ts';

const problems = problemResponses(400, 401, 403, 404, 429);
const WebhookParams = Type.Object({ webhook_id: Type.String({ description: 'whk_<26-char ULID>' }) });
const DeliveryParams = Type.Object({
  webhook_id: Type.String(),
  delivery_id: Type.String({ description: 'whd_<26-char ULID>' }),
});
const WEBHOOK_ID = /^whk_[0-9A-HJKMNP-TV-Z]{26}$/;
const DELIVERY_ID = /^whd_[0-9A-HJKMNP-TV-Z]{26}$/;

export interface WebhookRouteOptions {
  store: Store;
  encryption: KeyEncryption;
  allowPrivate: boolean;
  worker: DeliveryWorker;
  /** webhooks one client may have (409 beyond) */
  maxPerClient: number;
  /** name resolution for the URL check; replaceable in tests */
  resolve?: (host: string) => Promise<Array<{ address: string; family: number }>>;
}

export function webhookRoutes({
  store,
  encryption,
  allowPrivate,
  worker,
  maxPerClient,
  resolve,
}: WebhookRouteOptions): RouteDefinition[] {
  const { db } = store;
  const notFound = () => new ApiError('not_found', 'No such webhook.');
  const visible = async (request: FastifyRequest, id: string) => {
    if (!WEBHOOK_ID.test(id)) throw notFound();
    const row = await findWebhook(db, request.principal.environment, id, ownerFilter(request.principal));
    if (!row) throw notFound();
    return row;
  };

  return [
    defineRoute({
      method: 'POST',
      url: '/api/v1/webhooks',
      config: { scope: 'webhooks:write', role: 'operator' },
      schema: {
        tags: ['webhooks'],
        summary: 'Subscribe an endpoint to events (the signing secret is returned once)',
        body: CreateWebhookBody,
        response: { 201: CreatedWebhook, ...problemResponses(409), ...problems },
      },
      handler: async (request, reply) => {
        const { url, events, description } = request.body;
        const check = await checkDestination(url, {
          allowPrivate,
          setting: 'VOUCH_WEBHOOK_ALLOW_PRIVATE',
          ...(resolve ? { resolve } : {}),
        });
        if (!check.ok)
          throw new ApiError('validation_failed', `url ${check.message}.`, {
            errors: [{ field: 'url', message: check.message }],
          });
        const id = newId('whk');
        const secret = generateWebhookSecret();
        const row = {
          id,
          environment: request.principal.environment,
          owner_client_id: request.principal.clientId,
          url: check.url.href,
          events: events.join(' '),
          description: description ?? null,
          secret: sealSecret(secret, id, encryption.current),
          created_at: Date.now(),
        };
        const audit = principalAuditor(store, request.principal);
        // The URL's origin only: a path or query may carry a token of the receiver's (a chat hook's).
        const facts = { url_origin: check.url.origin, events, owner_client_id: row.owner_client_id };
        const stored = await insertWebhookCapped(store, row, maxPerClient, (trx) =>
          audit(trx, { action: 'webhook.created', target: `webhook:${id}`, after: facts }),
        );
        if (!stored)
          throw new ApiError(
            'conflict',
            `This client already has ${maxPerClient} webhooks (live and test together), the most it may have; delete one first.`,
          );
        request.log.info(
          {
            event: 'webhook_created',
            webhook_id: id,
            owner_client_id: row.owner_client_id,
            environment: row.environment,
            events,
            principal_id: request.principal.id,
          },
          'webhook created',
        );
        reply.code(201).header('location', `/api/v1/webhooks/${id}`);
        return { ...toWebhookRecord(stored), secret };
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/webhooks',
      config: { scope: 'webhooks:read' },
      schema: {
        tags: ['webhooks'],
        summary: 'List webhooks, newest first',
        querystring: ListQuery,
        response: {
          200: Type.Object({ data: Type.Array(WebhookRecord), next_cursor: Type.Union([Type.String(), Type.Null()]) }),
          ...problems,
        },
      },
      handler: async (request) => {
        const { limit = 50, cursor } = request.query;
        const page = await listWebhooks(
          db,
          request.principal.environment,
          ownerFilter(request.principal),
          limit,
          cursor,
        );
        return { data: page.rows.map(toWebhookRecord), next_cursor: nextCursor(page, (last) => last.id) };
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/webhooks/:webhook_id',
      config: { scope: 'webhooks:read' },
      schema: {
        tags: ['webhooks'],
        summary: 'Read a webhook',
        params: WebhookParams,
        response: { 200: WebhookRecord, ...problems },
      },
      handler: async (request) => toWebhookRecord(await visible(request, request.params.webhook_id)),
    }),

    defineRoute({
      method: 'DELETE',
      url: '/api/v1/webhooks/:webhook_id',
      config: { scope: 'webhooks:write', role: 'operator' },
      schema: {
        tags: ['webhooks'],
        summary: 'Delete a webhook (pending deliveries are dropped)',
        params: WebhookParams,
        response: { 200: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }), ...problems },
      },
      handler: async (request) => {
        const row = await visible(request, request.params.webhook_id);
        const audit = principalAuditor(store, request.principal);
        const facts = { url_origin: new URL(row.url).origin, events: row.events.split(' ') };
        await deleteWebhook(db, row.id, (trx) =>
          audit(trx, {
            action: 'webhook.deleted',
            target: `webhook:${row.id}`,
            before: facts,
            after: { deleted: true },
          }),
        );
        request.log.info(
          { event: 'webhook_deleted', webhook_id: row.id, principal_id: request.principal.id },
          'webhook deleted',
        );
        return { id: row.id, deleted: true as const };
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/webhooks/:webhook_id/deliveries',
      config: { scope: 'webhooks:read' },
      schema: {
        tags: ['webhooks'],
        summary: "A webhook's deliveries, newest first",
        params: WebhookParams,
        querystring: ListQuery,
        response: {
          200: Type.Object({ data: Type.Array(DeliveryRecord), next_cursor: Type.Union([Type.String(), Type.Null()]) }),
          ...problems,
        },
      },
      handler: async (request) => {
        const row = await visible(request, request.params.webhook_id);
        const { limit = 50, cursor } = request.query;
        const page = await listDeliveries(db, request.principal.environment, row.id, limit, cursor);
        return { data: page.rows.map(toDeliveryRecord), next_cursor: nextCursor(page, (last) => last.id) };
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/webhooks/:webhook_id/deliveries/:delivery_id/retry',
      config: { scope: 'webhooks:write', role: 'operator' },
      schema: {
        tags: ['webhooks'],
        summary: 'Send a delivery again now (same webhook-id)',
        params: DeliveryParams,
        response: { 202: DeliveryRecord, ...problemResponses(409), ...problems },
      },
      handler: async (request, reply) => {
        const row = await visible(request, request.params.webhook_id);
        const deliveryId = request.params.delivery_id;
        if (
          !DELIVERY_ID.test(deliveryId) ||
          !(await findDelivery(db, request.principal.environment, row.id, deliveryId))
        )
          throw new ApiError('not_found', 'No such delivery.');
        if (!(await scheduleRetry(db, deliveryId)))
          throw new ApiError('conflict', 'This delivery is being attempted right now; retry when it has finished.');
        worker.kick();
        reply.code(202);
        return toDeliveryRecord((await findDelivery(db, request.principal.environment, row.id, deliveryId))!);
      },
    }),
  ];
}
