// /network/v1: what peers call. The descriptor is public; flags and evaluate take signed requests
// from active peers only (peer-auth.ts). Every answer here is signed. Logs carry the peer and
// counts, never elements, tags or labels.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { defineRoute, type RouteDefinition } from '../http/route.ts';
import type { PeerHooks } from './peer-auth.ts';
import { Type } from 'typebox';
import { ApiError, problemResponses } from '../http/problem.ts';
import type { NetworkIdentity } from './identity.ts';
import type { NetworkMetrics } from './metrics.ts';
import { evaluateBlindedOff } from './oprf-thread.ts';
import { flagsPage, parseCursor } from './flags-page.ts';
import type { NetworkDb } from './tables.ts';
import { consumeBudget } from './budget-repository.ts';
import { peerRate } from './peer-rate.ts';
import { pageCache } from './page-cache.ts';

export interface PeerRouteOptions {
  db: NetworkDb;
  /** brings the published set up to date (shared by concurrent callers; never rejects) */
  refresh: () => Promise<void>;
  /** entity ids follow the members' common hashing (the descriptor says so) */
  commonEntityIds: boolean;
  identity: NetworkIdentity;
  metrics: NetworkMetrics;
  name: string;
  publicUrl: string | undefined;
  hooks: PeerHooks;
}

const problems = problemResponses(400, 401, 403, 429);
const ELEMENT = Type.String({
  pattern: '^[A-Za-z0-9_-]{43}$',
  description: 'a blinded ristretto255 element, base64url (32 bytes)',
});
const EvaluateBody = Type.Object(
  {
    elements: Type.Array(ELEMENT, { minItems: 1, maxItems: 1000 }),
  },
  { additionalProperties: false, examples: [{ elements: ['4kKqXPp-b1HnQnqu6t3xmlQGZxZHHwq37U3lEnfzmQI'] }] },
);
const FlagsQuery = Type.Object(
  {
    since: Type.Optional(
      Type.String({ pattern: '^\\d{1,15}$', description: 'the `since` of the previous pull; absent: the whole set' }),
    ),
    cursor: Type.Optional(Type.String({ maxLength: 64, description: 'next_cursor of the previous page' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 5000, default: 1000 })),
  },
  { additionalProperties: false },
);
const Entry = Type.Union([
  Type.Object({
    tag: Type.String(),
    sealed: Type.String({ description: 'the label, AES-256-GCM under a key derived from the PRF output' }),
  }),
  Type.Object({ tag: Type.String(), withdrawn: Type.Literal(true) }),
]);
const Descriptor = Type.Object({
  name: Type.String(),
  signing_key: Type.String({
    description: "Ed25519 public key (base64url) that signs this deployment's requests and answers: pin it",
  }),
  oprf_public_key: Type.String({
    description: 'ristretto255 public key of its OPRF (RFC 9497 VOPRF, ristretto255-SHA512)',
  }),
  endpoints: Type.Object({ descriptor: Type.String(), flags: Type.String(), evaluate: Type.String() }),
  common_entity_ids: Type.Boolean({
    description:
      'whether this deployment publishes and resolves entity ids (identifier type `entity`), its admin having declared that they follow the common hashing the members agreed on',
  }),
});

/**
 * How long a pull's first page waits for the published set to be brought up to date before it serves the set as stored.
 */
const PULL_WAITS_MS = 3000;
/** Past this share of its budget in 24 hours, a peer is alerted on (docs/network.md, "What the budget bounds"). */
const BUDGET_ALERT_SHARE = 0.8;

export function peerRoutes({
  db,
  refresh,
  commonEntityIds,
  identity,
  name,
  publicUrl,
  hooks,
  metrics,
}: PeerRouteOptions): RouteDefinition[] {
  // A signed request from an active peer, within its request rate, answered signed; the descriptor is public, answered
  // signed.
  const rate = peerRate((reason) => metrics.refused(reason));
  const signedPeerRequest = {
    onRequest: async (request: FastifyRequest, reply: FastifyReply) => {
      await hooks.verifyPeer(request, reply);
      await rate.refuseExhausted(request);
    },
    preHandler: async (request: FastifyRequest, reply: FastifyReply) => {
      await hooks.verifySignature(request, reply);
      await rate.spend(request);
    },
    onSend: hooks.signAnswer,
    onResponse: hooks.countServed,
  };
  const pages = pageCache();

  return [
    defineRoute({
      method: 'GET',
      url: '/network/v1/descriptor',
      onSend: hooks.signAnswer,
      schema: {
        tags: ['network'],
        operationId: 'getNetworkDescriptor',
        summary: "This deployment's network identity (answers signed; pin signing_key)",
        response: { 200: Descriptor },
      },
      handler: async (request) => {
        const base = publicUrl ?? `${request.protocol}://${request.host}`;
        return {
          name,
          signing_key: identity.signingKey,
          oprf_public_key: identity.oprfPublicKey,
          endpoints: {
            descriptor: `${base}/network/v1/descriptor`,
            flags: `${base}/network/v1/flags`,
            evaluate: `${base}/network/v1/evaluate`,
          },
          common_entity_ids: commonEntityIds,
        };
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/network/v1/flags',
      config: { peer: true },
      ...signedPeerRequest,
      schema: {
        tags: ['network'],
        operationId: 'getNetworkFlags',
        summary: 'Flag entries published to the calling peer, changed since `since` (signed peer request)',
        querystring: FlagsQuery,
        response: {
          200: Type.Object({
            epoch: Type.String(),
            entries: Type.Array(Entry),
            next_cursor: Type.Union([Type.String(), Type.Null()]),
            since: Type.String(),
          }),
          ...problems,
        },
      },
      handler: async (request) => {
        const peer = request.peer!;
        const cursor = parseCursor(request.query.cursor);
        if (cursor === null) throw new ApiError('invalid_request', 'cursor is not one this server gave.');
        if (!cursor) {
          // A pull from its first page sees what changed a moment ago; a large change (100k new
          // flags is minutes of PRF work) goes on in the background and reaches later pages or pulls.
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([refresh(), new Promise<void>((resolve) => (timer = setTimeout(resolve, PULL_WAITS_MS)))]);
          clearTimeout(timer);
        }
        const since = Number(request.query.since ?? 0);
        const limit = request.query.limit ?? 1000;
        const { page, cached } = await pages.get(
          db,
          {
            peerId: peer.id,
            epoch: `${peer.publish_epoch}:${peer.publish}`,
            since,
            cursor: request.query.cursor,
            limit,
          },
          () => flagsPage(db, identity.createdAt, peer, since, cursor, limit),
        );
        request.log.info(
          { event: 'network_flags_served', peer_id: peer.id, entries: page.entries.length, cached },
          'flags served to a peer',
        );
        return page;
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/network/v1/evaluate',
      config: { peer: true },
      ...signedPeerRequest,
      schema: {
        tags: ['network'],
        operationId: 'evaluateNetworkElements',
        summary:
          "Evaluate blinded elements under this deployment's OPRF key, with a VOPRF batch proof (signed peer request)",
        body: EvaluateBody,
        response: { 200: Type.Object({ evaluated: Type.Array(Type.String()), proof: Type.String() }), ...problems },
      },
      handler: async (request) => {
        const peer = request.peer!;
        const { elements } = request.body;
        const budget = Number(peer.budget_per_day);
        // Every element is paid for before any is looked at, valid or not: checking them is CPU too,
        // and a refused batch must not be a free way to spend ours.
        const grant = await consumeBudget(db, peer, elements.length);
        const alert =
          grant.granted &&
          grant.used >= BUDGET_ALERT_SHARE * budget &&
          grant.used - elements.length < BUDGET_ALERT_SHARE * budget;
        metrics.budgetUsed(peer.id, grant.used, budget, alert);
        if (alert)
          request.log.warn(
            { event: 'network_budget_high', peer_id: peer.id, used: grant.used, budget_per_day: budget },
            `a peer used over ${BUDGET_ALERT_SHARE * 100} % of its evaluation budget in 24 hours`,
          );
        if (!grant.granted) {
          metrics.refused('budget');
          request.log.warn(
            {
              event: 'network_budget_exhausted',
              peer_id: peer.id,
              asked: elements.length,
              used: grant.used,
              budget_per_day: budget,
            },
            'evaluate refused: budget of the last 24 hours',
          );
          throw new ApiError(
            'rate_limited',
            `This peer's budget of ${budget} evaluations in any 24 hours is used up (${grant.used} used).`,
            { headers: { 'retry-after': String(grant.retryAfterSeconds) } },
          );
        }
        // In the worker thread, the checks too: decoding a full batch is ~0.1 s, evaluating it a second or more.
        const answer = await evaluateBlindedOff(identity.oprf, elements);
        if ('bad' in answer) {
          metrics.refused('bad_element');
          throw new ApiError(
            'validation_failed',
            'Every element must be a ristretto255 element (32 bytes, base64url) other than the identity; the batch was charged to the budget.',
            { errors: [{ field: `/elements/${answer.bad}`, message: 'must be a valid ristretto255 element' }] },
          );
        }
        metrics.evaluations('served', elements.length);
        request.log.info(
          { event: 'network_evaluated', peer_id: peer.id, count: elements.length },
          'elements evaluated for a peer',
        );
        return answer;
      },
    }),
  ];
}
