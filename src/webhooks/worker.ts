// The delivery worker: claims due deliveries with a lease (so one event reaches one endpoint once,
// however many workers and servers run), POSTs each signed, and schedules retries with growing
// delays. Everything it needs is in the store, so a restart loses nothing: a delivery whose worker
// died is claimed again when its lease runs out.
//
// Endpoints are isolated from one another: each delivery runs on its own (no batch waits for its
// slowest member), a finished one frees its slot for the next claim at once, and a claim takes
// nothing for an endpoint or a client that already has its share in flight, so a receiver that
// never answers holds at most `endpointConcurrency` slots of this process and its client at most
// `clientConcurrency`. An endpoint that keeps failing is paused for a cool-down (circuit breaker)
// instead of being hammered; its deliveries wait, keep their attempts, and are not lost.
import type { FastifyBaseLogger } from 'fastify';
import type { Store } from '../store/db.ts';
import type { KeyEncryption } from '../lib/envelope.ts';
import type { UrlPolicy } from './ssrf.ts';
import { signedHeaders, unsealSecret } from './signer.ts';
import { claimDue, recordAttempt, type AttemptOutcome, type Breaker, type ClaimedDelivery } from './claims.ts';
import { expandOneFanout } from './fanout.ts';
import { deliveryParts } from './delivery-repository.ts';
import { postOnce } from './transport.ts';

/**
 * Delays before each retry: the first within 30 s, then growing, 8 attempts over about 23 hours
 * (receivers are promised at least 5 tries over 24 h).
 */
const RETRY_DELAYS_MS = [10_000, 60_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 28_800_000, 28_800_000];

/** Delivery limits of one process, and the circuit breaker (VOUCH_WEBHOOK_* in the README). */
export interface DeliveryLimits {
  /** deliveries in flight at once in this process */
  concurrency: number;
  /** deliveries in flight at once to one endpoint (webhook) */
  endpointConcurrency: number;
  /** deliveries in flight at once to the webhooks of one client */
  clientConcurrency: number;
  /** failed attempts in a row that pause an endpoint */
  breakerFailures: number;
  /** how long a paused endpoint waits before one probe is let through */
  breakerCooldownMs: number;
}

const DEFAULT_LIMITS: DeliveryLimits = {
  concurrency: 64,
  endpointConcurrency: 2,
  clientConcurrency: 16,
  breakerFailures: 5,
  breakerCooldownMs: 60_000,
};

export interface WorkerOptions extends Partial<DeliveryLimits> {
  /** how often to look for due deliveries and pending fan-outs */
  pollMs?: number;
  /** how long a claim holds; longer than the delivery timeout */
  leaseMs?: number;
  /** a delivery that does not answer 2xx within this (name resolution included) is a failure */
  timeoutMs?: number;
  retryDelaysMs?: number[];
  /** deliveries claimed per query at most */
  batch?: number;
  urlPolicy?: Partial<UrlPolicy>;
}

interface Deps {
  store: Store;
  encryption: KeyEncryption;
  allowPrivate: boolean;
  log: FastifyBaseLogger;
}

export class DeliveryWorker {
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private filling: Promise<void> | undefined;
  private fillAgain = false;
  private expanding: Promise<void> | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly perEndpoint = new Map<string, number>();
  private readonly perClient = new Map<string, number>();
  /** endpoints at the breaker's threshold with their one probe in flight */
  private readonly probing = new Set<string>();
  private readonly pollMs: number;
  private readonly leaseMs: number;
  private readonly timeoutMs: number;
  private readonly delays: number[];
  private readonly batch: number;
  private readonly limits: DeliveryLimits;
  private readonly breaker: Breaker;
  private readonly urlPolicy: UrlPolicy;

  constructor(
    private readonly deps: Deps,
    options: WorkerOptions = {},
  ) {
    this.pollMs = options.pollMs ?? 1000;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.leaseMs = options.leaseMs ?? Math.max(30_000, this.timeoutMs * 3);
    this.delays = options.retryDelaysMs ?? RETRY_DELAYS_MS;
    this.batch = options.batch ?? 10;
    const limit = <K extends keyof DeliveryLimits>(name: K) => options[name] ?? DEFAULT_LIMITS[name];
    this.limits = {
      concurrency: limit('concurrency'),
      endpointConcurrency: limit('endpointConcurrency'),
      clientConcurrency: limit('clientConcurrency'),
      breakerFailures: limit('breakerFailures'),
      breakerCooldownMs: limit('breakerCooldownMs'),
    };
    this.breaker = { failures: this.limits.breakerFailures, cooldownMs: this.limits.breakerCooldownMs };
    this.urlPolicy = { allowPrivate: deps.allowPrivate, ...options.urlPolicy };
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.tick();
  }

  /** Stops claiming; deliveries in flight finish (and are recorded) first, so none is sent twice. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await Promise.all([this.filling, this.expanding]);
    await Promise.all([...this.inFlight]);
  }

  /** Looks for due deliveries now (tests, and right after a manual retry). */
  kick(): void {
    this.fill();
  }

  private tick(): void {
    if (this.stopped) return;
    this.fill();
    this.expand();
    this.timer = setTimeout(() => this.tick(), this.pollMs);
    this.timer.unref();
  }

  /** Fan-out rows are expanded one at a time, beside deliveries, never in their way. */
  private expand(): void {
    if (this.expanding || this.stopped) return;
    const { store } = this.deps;
    this.expanding = (async () => {
      while (!this.stopped && (await expandOneFanout(store, this.leaseMs))) this.fill();
    })()
      .catch((err: unknown) => this.deps.log.warn({ err }, 'webhook fan-out failed'))
      .finally(() => {
        this.expanding = undefined;
      });
  }

  /** Claims into free slots until none is free or nothing more is due; one claim loop at a time. */
  private fill(): void {
    if (this.stopped) return;
    if (this.filling) {
      this.fillAgain = true;
      return;
    }
    this.fillAgain = false;
    this.filling = this.claimIntoFreeSlots()
      .catch((err: unknown) => this.deps.log.warn({ err }, 'webhook delivery claim failed'))
      .finally(() => {
        this.filling = undefined;
        if (this.fillAgain) this.fill();
      });
  }

  private async claimIntoFreeSlots(): Promise<void> {
    const { store } = this.deps;
    const { concurrency, endpointConcurrency, clientConcurrency, breakerFailures } = this.limits;
    while (!this.stopped) {
      const free = concurrency - this.inFlight.size;
      if (free <= 0) return;
      const claimed = await claimDue(store, Math.min(free, this.batch), this.leaseMs, {
        // Every endpoint and client without room is left out of the query itself, so a backlog of
        // theirs never fills the candidates and hides other endpoints' due deliveries.
        excludeWebhooks: [...full(this.perEndpoint, endpointConcurrency), ...this.probing],
        excludeOwners: full(this.perClient, clientConcurrency),
        // An endpoint at the breaker's threshold whose cool-down has ended gets one probe at a time.
        roomFor: (webhookId, failures) =>
          (failures >= breakerFailures ? 1 : endpointConcurrency) - (this.perEndpoint.get(webhookId) ?? 0),
        roomForClient: (owner) => clientConcurrency - (this.perClient.get(owner) ?? 0),
      });
      if (claimed.length === 0) return;
      for (const claim of claimed) this.run(claim);
    }
  }

  private run(claim: ClaimedDelivery): void {
    bump(this.perEndpoint, claim.webhook_id, 1);
    bump(this.perClient, claim.owner_client_id, 1);
    const probe = claim.consecutive_failures >= this.limits.breakerFailures;
    if (probe) this.probing.add(claim.webhook_id);
    const running: Promise<void> = this.deliver(claim)
      .catch((err: unknown) => this.deps.log.warn({ err, delivery_id: claim.id }, 'webhook delivery failed to run'))
      .finally(() => {
        this.inFlight.delete(running);
        bump(this.perEndpoint, claim.webhook_id, -1);
        bump(this.perClient, claim.owner_client_id, -1);
        if (probe) this.probing.delete(claim.webhook_id);
        this.fill();
      });
    this.inFlight.add(running);
  }

  private async deliver(claim: ClaimedDelivery): Promise<void> {
    const { db } = this.deps.store;
    const [webhook, event] = await deliveryParts(db, claim.webhook_id, claim.event_id);
    const started = performance.now();
    // Enqueueing pairs a webhook only with events of its environment; a delivery that pairs them
    // otherwise (a row written by hand, a future bug) must never carry test data to a live endpoint.
    if (!webhook || !event || webhook.environment !== event.environment) {
      await recordAttempt(
        db,
        claim,
        { statusCode: null, error: 'invalid_delivery', durationMs: 0, success: false },
        undefined,
      );
      if (webhook && event)
        this.deps.log.warn(
          { event: 'webhook_environment_mismatch', delivery_id: claim.id, webhook_id: claim.webhook_id },
          'webhook delivery refused: environments differ',
        );
      return;
    }
    const secret = unsealSecret(webhook.secret, webhook.id, this.deps.encryption);
    let outcome: AttemptOutcome;
    let code: string | undefined;
    if (secret === undefined) {
      // Sealed under a key-encryption key this process lacks: an operator's matter, retried.
      outcome = { statusCode: null, error: 'secret_unavailable', durationMs: 0, success: false };
    } else {
      const timestamp = new Date();
      const body = JSON.stringify({
        type: event.type,
        timestamp: timestamp.toISOString(),
        data: JSON.parse(event.data) as unknown,
      });
      ({ outcome, code } = await postOnce(
        webhook.url,
        signedHeaders(secret, event.id, timestamp, body),
        body,
        this.urlPolicy,
        this.timeoutMs,
      ));
    }
    outcome.durationMs = performance.now() - started;
    const attempt = claim.attempts + 1;
    const nextAt = outcome.success || attempt > this.delays.length ? undefined : Date.now() + this.delays[attempt - 1]!;
    await recordAttempt(db, claim, outcome, nextAt, this.breaker);
    if (!outcome.success)
      this.deps.log.info(
        {
          event: 'webhook_attempt_failed',
          delivery_id: claim.id,
          webhook_id: claim.webhook_id,
          attempt,
          status_code: outcome.statusCode,
          error: outcome.error,
          code,
        },
        'webhook delivery failed',
      );
  }
}

function bump(counts: Map<string, number>, key: string, by: number): void {
  const n = (counts.get(key) ?? 0) + by;
  if (n > 0) counts.set(key, n);
  else counts.delete(key);
}

const full = (counts: Map<string, number>, limit: number) =>
  [...counts.entries()].filter(([, n]) => n >= limit).map(([key]) => key);
