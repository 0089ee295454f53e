// The life of a delivery attempt in the store: claimed with a lease (no other worker, thread,
// process or server takes it until the lease ends), then recorded, which also moves the endpoint's
// circuit breaker. Claims skip endpoints whose circuit is open and endpoints or clients the caller
// already has enough deliveries in flight for, so one slow endpoint cannot fill a worker.
// The statements are delivery-repository.ts's.
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Store } from '../store/db.ts';
import { claimRows } from '../store/claims.ts';
import {
  closeCircuit,
  countFailure,
  dueDeliveriesQuery,
  insertAttempt,
  leaseDeliveries,
  settleDelivery,
} from './delivery-repository.ts';

export interface ClaimedDelivery {
  id: string;
  webhook_id: string;
  event_id: string;
  attempts: number;
  lease_until: number;
  /** the webhook's owner: the client whose concurrency share this attempt uses */
  owner_client_id: string;
  /** the endpoint's failures in a row when claimed: at the breaker's threshold, this is a probe */
  consecutive_failures: number;
}

export interface ClaimLimits {
  /** endpoints and clients that may not take another delivery now */
  excludeWebhooks?: readonly string[];
  excludeOwners?: readonly string[];
  /** deliveries of one endpoint this claim may take (in-flight ones already subtracted) */
  roomFor?: (webhookId: string, consecutiveFailures: number) => number;
  /** deliveries for one client's webhooks this claim may take */
  roomForClient?: (ownerClientId: string) => number;
}

interface Candidate {
  id: string;
  webhook_id: string;
  event_id: string;
  attempts: number;
  owner_client_id: string;
  consecutive_failures: number;
}

/** Among due candidates (oldest first), those the room of their endpoint and client allows. */
function pick(candidates: Candidate[], limit: number, limits: ClaimLimits): Candidate[] {
  const perEndpoint = new Map<string, number>();
  const perClient = new Map<string, number>();
  const picked: Candidate[] = [];
  for (const c of candidates) {
    if (picked.length >= limit) break;
    const n = perEndpoint.get(c.webhook_id) ?? 0;
    const m = perClient.get(c.owner_client_id) ?? 0;
    if (limits.roomFor && n >= limits.roomFor(c.webhook_id, Number(c.consecutive_failures))) continue;
    if (limits.roomForClient && m >= limits.roomForClient(c.owner_client_id)) continue;
    perEndpoint.set(c.webhook_id, n + 1);
    perClient.set(c.owner_client_id, m + 1);
    picked.push(c);
  }
  return picked;
}

/**
 * Claims up to `limit` due deliveries for `leaseMs`: concurrent workers claim disjoint sets
 * (store/claims.ts says how each store keeps them apart).
 */
export async function claimDue(
  store: Store,
  limit: number,
  leaseMs: number,
  limits: ClaimLimits = {},
  now = Date.now(),
): Promise<ClaimedDelivery[]> {
  const until = now + leaseMs;
  // A few more candidates than slots: some may belong to an endpoint with room for fewer.
  const window = Math.min(limit * 4, 400);
  const claimed = await claimRows(
    store,
    {
      choose: async (db, skipLocked) =>
        pick(
          await skipLocked(
            dueDeliveriesQuery(db, now, window, { webhooks: limits.excludeWebhooks, owners: limits.excludeOwners }),
          ).execute(),
          limit,
          limits,
        ),
      async take(db, picked) {
        const leased = await leaseDeliveries(
          db,
          picked.map((p) => p.id),
          until,
          now,
        );
        const ids = new Set(leased.map((r) => r.id));
        return picked.filter((p) => ids.has(p.id));
      },
    },
    'd',
  );
  return claimed.map((c) => ({
    id: c.id,
    webhook_id: c.webhook_id,
    event_id: c.event_id,
    attempts: Number(c.attempts),
    owner_client_id: c.owner_client_id,
    consecutive_failures: Number(c.consecutive_failures),
    lease_until: until,
  }));
}

export interface AttemptOutcome {
  statusCode: number | null;
  /** a category only (timeout, refused, dns, tls, connection, http_<status>, blocked, …): see transport.ts */
  error: string | null;
  durationMs: number;
  success: boolean;
}

export interface Breaker {
  /** failed attempts in a row that open the circuit */
  failures: number;
  /** how long an open circuit pauses the endpoint's deliveries */
  cooldownMs: number;
}

/**
 * Records one attempt and settles the delivery: succeeded, retried at `nextAt`, or failed when
 * `nextAt` is undefined. Only while this worker's lease holds (`leaseUntil`): a worker whose lease
 * ran out must not overwrite what the next holder did. A success closes the endpoint's circuit;
 * a failure counts towards opening it, and each failure while it is at the threshold (the probe
 * after a cool-down) pauses it again.
 */
export async function recordAttempt(
  db: Kysely<Database>,
  claim: ClaimedDelivery,
  outcome: AttemptOutcome,
  nextAt: number | undefined,
  breaker?: Breaker,
  now = Date.now(),
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const status = outcome.success ? 'succeeded' : nextAt === undefined ? 'failed' : 'pending';
    await settleDelivery(trx, claim.id, claim.lease_until, status, outcome, nextAt, now);
    // The attempt happened whatever became of the lease: the log and the breaker record it.
    await insertAttempt(trx, claim.id, outcome, now);
    if (outcome.success) await closeCircuit(trx, claim.webhook_id);
    else if (breaker) await countFailure(trx, claim.webhook_id, breaker, now);
  });
}
