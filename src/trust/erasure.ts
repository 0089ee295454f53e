// Erasure of an entity (docs/api.md, "Erasure"; GDPR art. 17), an admin action: its events, aggregates and identifier
// links go in one transaction; decisions stay for audit with the id replaced by a salted digest (HMAC-SHA256 under a
// per-deployment salt kept in the store), and so do other entities' rows that name it as a counterparty, label notes
// and stored idempotent responses, and what the desk's lists, reviews and rules hold about it: the features above
// trust hand in their erasers (`erasers`, from src/routes.ts), and what decisions stored for their rules is
// erasure-scrub.ts's. Its entries in the network's published set are withdrawn in the same transaction. The same
// transaction records the erasure (who, when, how much; the digest, never the id) and announces it to every
// `entity.erased` subscriber of the environment. Every instance drops its cached scores before its next request: the
// erasure travels on the revocation feed, which each authenticated request polls first. Everything is within the
// caller's environment (docs/api.md, "Integration" test mode): erasing a test entity leaves the live entity of the
// same id, its events and its decisions as they were, and vice versa.
import { createHmac, randomBytes } from 'node:crypto';
import { defineRoute, type RouteDefinition } from '../http/route.ts';
import { Type } from 'typebox';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Store } from '../store/db.ts';
import { lockForUpdate } from '../store/locks.ts';
import { foldWriteAheadLog, zeroDeletedBytes } from '../store/secure-delete.ts';
import type { ChangeFeed } from '../store/change-feed.ts';
import type { DecisionWriter } from '../audit/decisions.ts';
import { renameDecisionSubject } from '../audit/decision-repository.ts';
import { problemResponses } from '../http/problem.ts';
import { rewriteStoredResponses } from '../http/idempotency-rows.ts';
import type { KeyEncryption } from '../lib/envelope.ts';
import { newId } from '../lib/ids.ts';
import { enqueueWebhookEvent } from '../webhooks/repository.ts';
import { eraseFromNetwork } from '../network/erasure.ts';
import { networkDb } from '../network/tables.ts';
import { replaceToken, replaceTokensDeep } from './erasure-text.ts';
import { scrubCounterparties, scrubDecisionRules, scrubFanouts, scrubJson, scrubLabelNotes } from './erasure-scrub.ts';
import { isFlagged } from './linkage.ts';
import { EntityId, checkEntityParam } from '../model/identifier-schemas.ts';
import { ensureSetting } from '../changes/repository.ts';
import { deleteEntity, entityFlagsQuery } from '../entities/entity-repository.ts';
import { deleteEntityEvents } from '../entities/event-repository.ts';
import { deleteLinksOf, dropIdentifierHolder, identifiersHeldBy } from '../entities/identifier-repository.ts';
import { deleteAggregatesOf } from '../entities/aggregate-repository.ts';
import { insertErasure } from './erasure-repository.ts';
import type { Environment, Principal } from '../lib/principal.ts';

const SALT_SETTING = 'erasure_salt';

/** The deployment's salt, created once (the first erasure) and shared by every instance through the store. */
async function erasureSalt(db: Kysely<Database>): Promise<string> {
  return ensureSetting(db, SALT_SETTING, randomBytes(32).toString('hex'));
}

/**
 * What an erased id becomes: stable per deployment (the same entity's decisions still group), not reversible without
 * the salt.
 */
function erasedId(salt: string, entityId: string): string {
  return `erased_${createHmac('sha256', salt).update(entityId, 'utf8').digest('hex')}`;
}

/**
 * The entity's identifier links go; each identifier's holder counts drop and its version moves (cached scores of the
 * other holders re-check).
 */
async function removeIdentifiers(
  trx: Transaction<Database>,
  env: Environment,
  id: string,
  flagged: boolean,
): Promise<Array<{ id_type: string; hash: string }>> {
  const held = await identifiersHeldBy(trx, env, id);
  for (const h of held) await dropIdentifierHolder(trx, env, h.id_type, h.hash, flagged);
  await deleteLinksOf(trx, env, id);
  return held;
}

/**
 * What a feature above trust holds about an erased entity (the desk's entity lists, its reviews), rewritten by the
 * feature's own repository in the erasure's transaction: the id becomes its digest.
 */
type EntityEraser = (trx: Transaction<Database>, environment: Environment, id: string, digest: string) => Promise<void>;

interface ErasureResult {
  eventsDeleted: number;
  digest: string;
  erasureId: string;
}

async function eraseEntity(
  store: Store,
  feed: ChangeFeed,
  encryption: KeyEncryption,
  erasers: readonly EntityEraser[],
  principal: Principal,
  id: string,
): Promise<ErasureResult> {
  const env = principal.environment;
  const erasureId = newId('era');
  const digest = erasedId(await erasureSalt(store.db), id);
  // Deleted rows' bytes must not outlive them in the store's free pages or log: zeroed as they are
  // freed, and the log folded into the file afterwards.
  zeroDeletedBytes(store);
  const eventsDeleted = await store.db.transaction().execute(async (trx) => {
    // The entity row is locked first, as ingestion locks it, so a concurrent batch for this entity
    // runs entirely before or entirely after the erasure.
    const row = await lockForUpdate(store, entityFlagsQuery(trx, env, id)).executeTakeFirst();
    const flagged = row
      ? isFlagged({ fraud_reports: Number(row.fraud_reports), blocklisted: Number(row.blocklisted) })
      : false;
    const deleted = await deleteEntityEvents(trx, env, id);
    const held = await removeIdentifiers(trx, env, id, flagged);
    await deleteAggregatesOf(trx, env, id);
    await deleteEntity(trx, env, id);
    // Only the live environment takes part in the network (docs/network.md): its published
    // entries, queued identifiers and peers' answers about it go now, not at the next sync.
    if (env === 'live')
      await eraseFromNetwork(
        networkDb(trx),
        store,
        id,
        held.map((h) => ({ idType: h.id_type, hash: h.hash })),
      );
    await scrubCounterparties(trx, env, id, digest);
    // Other entities' events that name it (a trade's or dispute's counterparty), stored canonical.
    await scrubJson(trx, env, 'events', id, digest, true);
    await renameDecisionSubject(trx, env, id, digest);
    await scrubJson(trx, env, 'decisions', id, digest, false);
    // Fan-outs first: their leases are taken back, so an expansion in flight either committed its
    // webhook events before this point (rewritten just below) or writes none from its old plan.
    await scrubFanouts(trx, env, id, digest);
    // Webhook events not yet delivered (or kept in the log) name it too.
    await scrubJson(trx, env, 'webhook_events', id, digest, false);
    await scrubLabelNotes(trx, env, id, digest);
    // The features above trust, in the order handed in (entity lists, then reviews); then what
    // score decisions stored for their rules.
    for (const erase of erasers) await erase(trx, env, id, digest);
    await scrubDecisionRules(trx, env, id, digest);
    await rewriteStoredResponses(trx, encryption, env, (body) => {
      try {
        return JSON.stringify(replaceTokensDeep(JSON.parse(body), id, digest));
      } catch {
        return replaceToken(body, id, digest);
      }
    });
    const count = Number(deleted.numDeletedRows);
    const erasedAt = Date.now();
    await insertErasure(trx, {
      id: erasureId,
      environment: env,
      entity_digest: digest,
      principal_id: principal.id,
      client_id: principal.clientId,
      events_deleted: count,
      erased_at: erasedAt,
    });
    // Every client's data about the entity went, so every subscriber of the environment hears of it.
    await enqueueWebhookEvent(
      trx,
      env,
      'entity.erased',
      {
        erasure_id: erasureId,
        entity_id: digest,
        events_deleted: count,
        erased_by: principal.id,
        erased_at: new Date(erasedAt).toISOString(),
      },
      { now: erasedAt },
    );
    await feed.record(trx, 'entity', digest);
    return count;
  });
  store.changes.localWrite();
  await foldWriteAheadLog(store);
  await feed.announce('entity', digest);
  return { eventsDeleted, digest, erasureId };
}

const Params = Type.Object({ entity_id: EntityId });
const ErasureResponse = Type.Object({ entity_id: Type.String(), events_deleted: Type.Integer() });

export interface ErasureRouteOptions {
  store: Store;
  feed: ChangeFeed;
  decisions: DecisionWriter;
  encryption: KeyEncryption;
  /** the erasers of the features above trust (src/routes.ts: the rules' entity lists, then the reviews), in order */
  erasers: readonly EntityEraser[];
  requireHashedIds?: boolean;
}

export function erasureRoutes({
  store,
  feed,
  decisions,
  encryption,
  erasers,
  requireHashedIds = false,
}: ErasureRouteOptions): RouteDefinition[] {
  return [
    defineRoute({
      method: 'DELETE',
      url: '/api/v1/trust/entities/:entity_id',
      config: { scope: 'trust:write', role: 'admin' },
      schema: {
        tags: ['trust'],
        summary:
          'Erase an entity (role admin): its events, aggregates and identifier links; its decisions keep a salted digest in place of the id',
        params: Params,
        response: {
          200: ErasureResponse,
          ...problemResponses(400, 401, 403, 429),
        },
      },
      handler: async (request) => {
        const { principal } = request;
        const id = request.params.entity_id;
        checkEntityParam(id, { requireHashedIds });
        // Decisions this instance is still writing are committed first, so the scrub sees them.
        await decisions.drain();
        // eraseEntity announces the erasure on the change feed, whose listener (app-services.ts) makes this
        // instance forget its cached scores and profiles before it returns, as every other instance
        // does before its next request.
        const { eventsDeleted, digest, erasureId } = await eraseEntity(store, feed, encryption, erasers, principal, id);
        request.log.info(
          {
            event: 'entity_erased',
            erasure_id: erasureId,
            entity_digest: digest,
            environment: principal.environment,
            events_deleted: eventsDeleted,
            principal_id: principal.id,
          },
          'entity erased',
        );
        return { entity_id: id, events_deleted: eventsDeleted };
      },
    }),
  ];
}
