// /api/v1/network: the admin's side (scope network:admin, role admin) — peers, a sync now, and
// what the network says about one entity (docs/api.md, "Network").
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { ApiError, ProblemSchema } from '../http/problem.ts';
import { newId } from '../keys/format.ts';
import { checkDestination, type UrlPolicy } from '../webhooks/ssrf.ts';
import { EntityId, checkEntityParam } from '../trust/schemas.ts';
import { ed25519PublicKey, type NetworkIdentity } from './identity.ts';
import { FLAG_KINDS } from './oprf.ts';
import { CreatePeerBody, DEFAULT_BUDGET_PER_DAY, PEER_ID, PeerRecord, UpdatePeerBody, findPeer, listPeers, removePeer, toPeerRecord } from './peers.ts';
import type { PeerSyncResult } from './resolver.ts';
import { networkFlagsFor, networkFlagsSignal } from './signal.ts';
import type { NetworkDb } from './tables.ts';

export interface AdminRouteOptions {
  db: NetworkDb;
  identity: NetworkIdentity;
  urlPolicy: UrlPolicy;
  syncNow: () => Promise<PeerSyncResult[]>;
}

const ADMIN = { scope: 'network:admin', role: 'admin' } as const;
const problems = { 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema, 404: ProblemSchema, 429: ProblemSchema };
const Params = Type.Object({ peer_id: Type.String({ description: 'peer_<26-char ULID>' }) });
const SyncResponse = Type.Object({
  peers: Type.Array(Type.Object({ id: Type.String(), flags_pulled: Type.Integer(), matched: Type.Integer(), error: Type.Optional(Type.String()) })),
});
const MatchesQuery = Type.Object({ entity_id: EntityId }, { additionalProperties: false });
const MatchesResponse = Type.Object({
  entity_id: Type.String(),
  peers: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), weight: Type.Number(), kinds: Type.Record(Type.String(), Type.Integer()), latest_month: Type.String() })),
  signal: Type.Object({ name: Type.Literal('network_flags'), value: Type.Number(), description: Type.String() }),
});

export default async function networkAdminRoutes(app: FastifyInstance, { db, identity, urlPolicy, syncNow }: AdminRouteOptions) {
  const notFound = () => new ApiError(404, 'not_found', 'No such peer.');
  const peerOr404 = async (id: string) => {
    const row = PEER_ID.test(id) ? await findPeer(db, id) : undefined;
    if (!row) throw notFound();
    return row;
  };

  app.get('/api/v1/network/peers', {
    config: ADMIN,
    schema: { tags: ['network'], operationId: 'listNetworkPeers', summary: 'List peers, oldest first', response: { 200: Type.Object({ data: Type.Array(PeerRecord) }), ...problems } },
  }, async () => ({ data: (await listPeers(db)).map(toPeerRecord) }));

  app.post<{ Body: Static<typeof CreatePeerBody> }>('/api/v1/network/peers', {
    config: ADMIN,
    schema: { tags: ['network'], operationId: 'createNetworkPeer', summary: 'Add a peer by URL and pinned signing key (nothing is sent to it before the next sync)', body: CreatePeerBody, response: { 201: PeerRecord, 409: ProblemSchema, ...problems } },
  }, async (request, reply) => {
    const body = request.body;
    const check = await checkDestination(body.url, urlPolicy);
    if (!check.ok) throw new ApiError(400, 'validation_failed', `url ${check.message}.`, { errors: [{ field: 'url', message: check.message }] });
    if (!ed25519PublicKey(body.signing_key)) throw new ApiError(400, 'validation_failed', 'signing_key is not an Ed25519 public key.', { errors: [{ field: 'signing_key', message: 'must be an Ed25519 public key' }] });
    if (body.signing_key === identity.signingKey) throw new ApiError(400, 'validation_failed', 'signing_key is this deployment\'s own key.', { errors: [{ field: 'signing_key', message: 'must be another deployment\'s key' }] });
    if (await db.selectFrom('network_peers').select('id').where('signing_key', '=', body.signing_key).executeTakeFirst()) {
      throw new ApiError(409, 'conflict', 'A peer with this signing key already exists.');
    }
    const row = {
      id: newId('peer'), name: body.name, url: check.url.href.replace(/\/+$/, ''), signing_key: body.signing_key, oprf_public: null, status: 'active',
      weight: body.weight ?? 1, publish: (body.publish ?? [...FLAG_KINDS]).join(' '), publish_epoch: 0, budget_per_day: body.budget_per_day ?? DEFAULT_BUDGET_PER_DAY,
      flags_since: '', flags_epoch: '', last_sync_at: null, last_error: null, created_at: Date.now(),
    };
    try {
      await db.insertInto('network_peers').values(row).execute();
    } catch {
      // Two admins adding the same key at once: the unique key refuses the second.
      throw new ApiError(409, 'conflict', 'A peer with this signing key already exists.');
    }
    request.log.info({ event: 'network_peer_added', peer_id: row.id, principal_id: request.principal.id }, 'network peer added');
    reply.code(201).header('location', `/api/v1/network/peers/${row.id}`);
    return toPeerRecord(row);
  });

  app.get<{ Params: Static<typeof Params> }>('/api/v1/network/peers/:peer_id', {
    config: ADMIN,
    schema: { tags: ['network'], operationId: 'getNetworkPeer', summary: 'Read a peer', params: Params, response: { 200: PeerRecord, ...problems } },
  }, async (request) => toPeerRecord(await peerOr404(request.params.peer_id)));

  app.patch<{ Params: Static<typeof Params>; Body: Static<typeof UpdatePeerBody> }>('/api/v1/network/peers/:peer_id', {
    config: ADMIN,
    schema: { tags: ['network'], operationId: 'updateNetworkPeer', summary: "Change a peer's status (active or suspended), weight, published kinds or daily budget", params: Params, body: UpdatePeerBody, response: { 200: PeerRecord, ...problems } },
  }, async (request) => {
    const row = await peerOr404(request.params.peer_id);
    const { status, weight, publish, budget_per_day: budget } = request.body;
    const nextPublish = publish === undefined ? row.publish : publish.join(' ');
    const changes = {
      ...(status !== undefined ? { status } : {}),
      ...(weight !== undefined ? { weight } : {}),
      ...(budget !== undefined ? { budget_per_day: budget } : {}),
      // What the peer may see changed: its next pull starts over, so withdrawn kinds leave its copy.
      ...(nextPublish !== row.publish ? { publish: nextPublish, publish_epoch: Number(row.publish_epoch) + 1 } : {}),
    };
    if (Object.keys(changes).length > 0) await db.updateTable('network_peers').set(changes).where('id', '=', row.id).execute();
    request.log.info({ event: 'network_peer_updated', peer_id: row.id, fields: Object.keys(request.body), principal_id: request.principal.id }, 'network peer updated');
    return toPeerRecord((await findPeer(db, row.id))!);
  });

  app.delete<{ Params: Static<typeof Params> }>('/api/v1/network/peers/:peer_id', {
    config: ADMIN,
    schema: { tags: ['network'], operationId: 'deleteNetworkPeer', summary: 'Remove a peer and everything pulled from it', params: Params, response: { 200: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }), ...problems } },
  }, async (request) => {
    const row = await peerOr404(request.params.peer_id);
    await removePeer(db, row.id);
    request.log.info({ event: 'network_peer_removed', peer_id: row.id, principal_id: request.principal.id }, 'network peer removed');
    return { id: row.id, deleted: true as const };
  });

  app.post('/api/v1/network/sync', {
    config: ADMIN,
    schema: { tags: ['network'], operationId: 'syncNetwork', summary: 'Sync with every active peer now: pull their flags, resolve pending identifiers', response: { 200: SyncResponse, ...problems } },
  }, async (request) => {
    const peers = await syncNow();
    request.log.info({ event: 'network_synced', peers: peers.length, errors: peers.filter((p) => p.error).length, principal_id: request.principal.id }, 'network sync run');
    return { peers };
  });

  app.get<{ Querystring: Static<typeof MatchesQuery> }>('/api/v1/network/matches', {
    config: ADMIN,
    schema: { tags: ['network'], operationId: 'getNetworkMatches', summary: "Which active peers flag one of an entity's identifiers (as of the last sync), and the network_flags signal", querystring: MatchesQuery, response: { 200: MatchesResponse, ...problems } },
  }, async (request) => {
    const id = request.query.entity_id;
    checkEntityParam(id);
    const env = request.principal.environment;
    const identifiers = await db.selectFrom('identifiers').select(['id_type as type', 'hash']).where('environment', '=', env).where('entity_id', '=', id).execute();
    const flags = await networkFlagsFor(db, env, identifiers);
    const signal = networkFlagsSignal(flags);
    return {
      entity_id: id,
      peers: flags.map((f) => ({ id: f.peer_id, name: f.peer_name, weight: f.weight, kinds: f.kinds as Record<string, number>, latest_month: f.latest_month })),
      signal: { name: 'network_flags' as const, value: signal.value, description: signal.description },
    };
  });
}
