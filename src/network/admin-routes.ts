// /api/v1/network: the admin's side (scope network:admin, role admin) — peers, a sync now, and
// what the network says about one entity (docs/network.md, "Admin API").
import type { onRequestHookHandler } from 'fastify';
import { defineRoute, type RouteDefinition } from '../http/route.ts';
import { Type } from 'typebox';
import { ApiError, problemResponses } from '../http/problem.ts';
import type { UrlPolicy } from '../webhooks/ssrf.ts';
import { checkEntityParam } from '../model/identifier-schemas.ts';
import type { NetworkIdentity } from './identity.ts';
import {
  CreatePeerBody,
  PEER_ID,
  PeerInputError,
  PeerRecord,
  UpdatePeerBody,
  addPeer,
  removePeer,
  toPeerRecord,
  updatePeer,
} from './peers.ts';
import { findPeer, listPeers } from './peer-repository.ts';
import type { PeerSyncResult } from './resolver.ts';
import { entityNetworkIdentifiers, networkFlagsFor, type IdentifierRef } from './signal.ts';
import { networkFlagsSignal } from '../model/network-signal.ts';
import { networkStatus } from './status.ts';
import type { NetworkDb } from './tables.ts';
import { MatchesQuery, MatchesResponse, Params, problems, StatusResponse, SyncResponse } from './admin-schemas.ts';

export interface AdminRouteOptions {
  db: NetworkDb;
  identity: NetworkIdentity;
  urlPolicy: UrlPolicy;
  syncNow: () => Promise<PeerSyncResult[]>;
  name: string;
  /** a peer's status, weight or existence changed: what scores read from the network may differ */
  onChanged: () => Promise<void>;
}

const ADMIN = { scope: 'network:admin', role: 'admin' } as const;
/**
 * The network is live data (docs/network.md, "Admin API"): test-environment credentials neither see
 * nor change it, and are answered as for a route that does not exist — before the body is read.
 */
const liveOnly: onRequestHookHandler = async (request) => {
  if (request.principal.environment !== 'live') throw new ApiError('not_found', 'No such resource.');
};

export function networkAdminRoutes({
  db,
  identity,
  urlPolicy,
  syncNow,
  name,
  onChanged,
}: AdminRouteOptions): RouteDefinition[] {
  const notFound = () => new ApiError('not_found', 'No such peer.');
  const peerOr404 = async (id: string) => {
    const row = PEER_ID.test(id) ? await findPeer(db, id) : undefined;
    if (!row) throw notFound();
    return row;
  };

  const routes: RouteDefinition[] = [
    defineRoute({
      method: 'GET',
      url: '/api/v1/network/peers',
      config: ADMIN,
      schema: {
        tags: ['network'],
        operationId: 'listNetworkPeers',
        summary: 'List peers, oldest first',
        response: { 200: Type.Object({ data: Type.Array(PeerRecord) }), ...problems },
      },
      handler: async () => ({ data: (await listPeers(db)).map(toPeerRecord) }),
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/network/peers',
      config: ADMIN,
      schema: {
        tags: ['network'],
        operationId: 'createNetworkPeer',
        summary: 'Add a peer by URL and pinned signing key (nothing is sent to it before the next sync)',
        body: CreatePeerBody,
        response: { 201: PeerRecord, ...problemResponses(409), ...problems },
      },
      handler: async (request, reply) => {
        let row;
        try {
          row = await addPeer(db, identity.signingKey, request.body, urlPolicy);
        } catch (err) {
          if (!(err instanceof PeerInputError)) throw err;
          if (err.conflict) throw new ApiError('conflict', 'A peer with this signing key already exists.');
          throw new ApiError('validation_failed', `${err.field} ${err.message}.`, {
            errors: [{ field: err.field, message: err.message }],
          });
        }
        request.log.info(
          { event: 'network_peer_added', peer_id: row.id, principal_id: request.principal.id },
          'network peer added',
        );
        reply.code(201).header('location', `/api/v1/network/peers/${row.id}`);
        return toPeerRecord(row);
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/network/peers/:peer_id',
      config: ADMIN,
      schema: {
        tags: ['network'],
        operationId: 'getNetworkPeer',
        summary: 'Read a peer',
        params: Params,
        response: { 200: PeerRecord, ...problems },
      },
      handler: async (request) => toPeerRecord(await peerOr404(request.params.peer_id)),
    }),

    defineRoute({
      method: 'PATCH',
      url: '/api/v1/network/peers/:peer_id',
      config: ADMIN,
      schema: {
        tags: ['network'],
        operationId: 'updateNetworkPeer',
        summary: "Change a peer's status (active or suspended), weight, published kinds or daily budget",
        params: Params,
        body: UpdatePeerBody,
        response: { 200: PeerRecord, ...problems },
      },
      handler: async (request) => {
        const row = await peerOr404(request.params.peer_id);
        const updated = await updatePeer(db, row, request.body);
        await onChanged();
        request.log.info(
          {
            event: 'network_peer_updated',
            peer_id: row.id,
            fields: Object.keys(request.body),
            principal_id: request.principal.id,
          },
          'network peer updated',
        );
        return toPeerRecord(updated);
      },
    }),

    defineRoute({
      method: 'DELETE',
      url: '/api/v1/network/peers/:peer_id',
      config: ADMIN,
      schema: {
        tags: ['network'],
        operationId: 'deleteNetworkPeer',
        summary: 'Remove a peer and everything pulled from it',
        params: Params,
        response: { 200: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }), ...problems },
      },
      handler: async (request) => {
        const row = await peerOr404(request.params.peer_id);
        await removePeer(db, row.id);
        await onChanged();
        request.log.info(
          { event: 'network_peer_removed', peer_id: row.id, principal_id: request.principal.id },
          'network peer removed',
        );
        return { id: row.id, deleted: true as const };
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/network/sync',
      config: ADMIN,
      schema: {
        tags: ['network'],
        operationId: 'syncNetwork',
        summary: 'Sync with every active peer now: pull their flags, resolve pending identifiers',
        response: { 200: SyncResponse, ...problems },
      },
      handler: async (request) => {
        const peers = await syncNow();
        request.log.info(
          {
            event: 'network_synced',
            peers: peers.length,
            errors: peers.filter((p) => p.error).length,
            principal_id: request.principal.id,
          },
          'network sync run',
        );
        return { peers };
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/network/status',
      config: ADMIN,
      schema: {
        tags: ['network'],
        operationId: 'getNetworkStatus',
        summary:
          "This deployment's network identity, and per peer its state, last sync, flags held, matches and budget used in the last 24 hours",
        response: { 200: StatusResponse, ...problems },
      },
      handler: async () => networkStatus(db, identity, name),
    }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/network/matches',
      config: ADMIN,
      schema: {
        tags: ['network'],
        operationId: 'getNetworkMatches',
        summary:
          "Which active peers flag one of an entity's identifiers — those events linked and those score requests named for it — as of the last sync, and the network_flags signal",
        querystring: MatchesQuery,
        response: { 200: MatchesResponse, ...problems },
      },
      handler: async (request) => {
        const id = request.query.entity_id;
        checkEntityParam(id);
        const { linked, named } = await entityNetworkIdentifiers(db, id);
        const view = async (identifiers: IdentifierRef[]) => {
          const flags = await networkFlagsFor(db, 'live', identifiers);
          const signal = networkFlagsSignal(flags);
          return {
            peers: flags.map((f) => ({
              id: f.peer_id,
              name: f.peer_name,
              weight: f.weight,
              kinds: f.kinds as Record<string, number>,
              latest_month: f.latest_month,
            })),
            signal: { name: 'network_flags' as const, value: signal.value, description: signal.description },
          };
        };
        return {
          entity_id: id,
          ...(await view(linked)),
          with_named_identifiers: { identifiers: named.length, ...(await view([...linked, ...named])) },
        };
      },
    }),
  ];
  return routes.map((route) => ({ ...route, onRequest: liveOnly }));
}
