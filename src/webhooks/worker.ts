// The delivery worker: claims due deliveries with a lease (so one event reaches one endpoint once,
// however many workers and servers run), POSTs each signed, and schedules retries with growing
// delays. Everything it needs is in the store, so a restart loses nothing: a delivery whose worker
// died is claimed again when its lease runs out.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { Store } from '../store/db.ts';
import type { KeyEncryption } from '../auth/kek.ts';
import { checkDestination, type UrlPolicy } from './ssrf.ts';
import { signedHeaders, unsealSecret } from './signer.ts';
import { claimDue, recordAttempt, type AttemptOutcome, type ClaimedDelivery } from './repository.ts';

/**
 * Delays before each retry: the first within 30 s, then growing, 8 attempts over about 23 hours
 * (CONTRACT §10: at least 5 tries over 24 h).
 */
export const RETRY_DELAYS_MS = [10_000, 60_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 28_800_000, 28_800_000];

export interface WorkerOptions {
  /** how often to look for due deliveries */
  pollMs?: number;
  /** how long a claim holds; longer than the delivery timeout */
  leaseMs?: number;
  /** a delivery that does not answer 2xx within this is a failure */
  timeoutMs?: number;
  retryDelaysMs?: number[];
  /** deliveries claimed at once */
  batch?: number;
  urlPolicy?: Partial<UrlPolicy>;
}

interface Deps {
  store: Store;
  encryption: KeyEncryption;
  allowPrivate: boolean;
  log: FastifyBaseLogger;
}

const MAX_ERROR = 200;

export class DeliveryWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private readonly pollMs: number;
  private readonly leaseMs: number;
  private readonly timeoutMs: number;
  private readonly delays: number[];
  private readonly batch: number;
  private readonly urlPolicy: UrlPolicy;

  constructor(private readonly deps: Deps, options: WorkerOptions = {}) {
    this.pollMs = options.pollMs ?? 1000;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.leaseMs = options.leaseMs ?? Math.max(30_000, this.timeoutMs * 3);
    this.delays = options.retryDelaysMs ?? RETRY_DELAYS_MS;
    this.batch = options.batch ?? 10;
    this.urlPolicy = { allowPrivate: deps.allowPrivate, ...options.urlPolicy };
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops claiming; deliveries in flight finish (and are recorded) first, so none is sent twice. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** Runs one pass now (tests, and right after an event is enqueued). */
  kick(): void {
    if (this.stopped || this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.schedule(0);
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.running = this.pass().catch((err: unknown) => this.deps.log.warn({ err }, 'webhook delivery pass failed')).finally(() => {
        this.running = undefined;
        if (!this.stopped) this.schedule(this.pollMs);
      });
    }, ms);
    this.timer.unref();
  }

  private async pass(): Promise<void> {
    for (;;) {
      if (this.stopped) return;
      const claimed = await claimDue(this.deps.store.db, this.deps.store.dialect, this.batch, this.leaseMs);
      if (claimed.length === 0) return;
      await Promise.all(claimed.map((c) => this.deliver(c)));
    }
  }

  private async deliver(claim: ClaimedDelivery): Promise<void> {
    const { db } = this.deps.store;
    const [webhook, event] = await Promise.all([
      db.selectFrom('webhooks').select(['id', 'url', 'secret', 'environment']).where('id', '=', claim.webhook_id).executeTakeFirst(),
      db.selectFrom('webhook_events').selectAll().where('id', '=', claim.event_id).executeTakeFirst(),
    ]);
    const started = performance.now();
    let outcome: AttemptOutcome;
    const secret = webhook ? unsealSecret(webhook.secret, webhook.id, this.deps.encryption) : undefined;
    if (!webhook || !event) {
      outcome = { statusCode: null, error: 'the webhook or its event no longer exists', durationMs: 0, success: false };
      await recordAttempt(db, claim, outcome, undefined);
      return;
    }
    // Enqueueing pairs a webhook only with events of its environment; a delivery that pairs them
    // otherwise (a row written by hand, a future bug) must never carry test data to a live endpoint.
    if (webhook.environment !== event.environment) {
      outcome = { statusCode: null, error: `the event belongs to the ${event.environment} environment, the webhook to ${webhook.environment}`, durationMs: 0, success: false };
      await recordAttempt(db, claim, outcome, undefined);
      this.deps.log.warn({ event: 'webhook_environment_mismatch', delivery_id: claim.id, webhook_id: claim.webhook_id }, 'webhook delivery refused: environments differ');
      return;
    }
    if (secret === undefined) {
      outcome = { statusCode: null, error: 'the signing secret cannot be opened with this key-encryption key', durationMs: 0, success: false };
    } else {
      const timestamp = new Date();
      const body = JSON.stringify({ type: event.type, timestamp: timestamp.toISOString(), data: JSON.parse(event.data) as unknown });
      outcome = await this.post(webhook.url, signedHeaders(secret, event.id, timestamp, body), body);
    }
    outcome.durationMs = performance.now() - started;
    const attempt = claim.attempts + 1;
    const nextAt = outcome.success || attempt > this.delays.length ? undefined : Date.now() + this.delays[attempt - 1]!;
    await recordAttempt(db, claim, outcome, nextAt);
    if (!outcome.success) this.deps.log.info({ event: 'webhook_attempt_failed', delivery_id: claim.id, webhook_id: claim.webhook_id, attempt, status_code: outcome.statusCode, error: outcome.error }, 'webhook delivery failed');
  }

  /** One POST to the checked address; redirects are not followed (a 3xx is a failure). */
  private async post(rawUrl: string, headers: Record<string, string>, body: string): Promise<AttemptOutcome> {
    const destination = await checkDestination(rawUrl, this.urlPolicy);
    if (!destination.ok) return { statusCode: null, error: `url ${destination.message}`, durationMs: 0, success: false };
    const { url, address, family } = destination;
    // The connection goes to the address just checked, never to a second DNS answer.
    const lookup: LookupFunction = (_host, options, callback) => {
      if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family }]);
      else callback(null, address, family);
    };
    const client = url.protocol === 'https:' ? https : http;
    return new Promise<AttemptOutcome>((resolve) => {
      let settled = false;
      const finish = (outcome: AttemptOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(outcome);
      };
      const request = client.request(url, {
        method: 'POST',
        lookup,
        agent: false,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'Vouch-Webhooks/1' },
      }, (response) => {
        const status = response.statusCode ?? 0;
        response.resume();
        response.on('end', () => finish({ statusCode: status, error: status >= 200 && status < 300 ? null : `HTTP ${status}`, durationMs: 0, success: status >= 200 && status < 300 }));
        response.on('error', (err) => finish({ statusCode: status, error: err.message.slice(0, MAX_ERROR), durationMs: 0, success: false }));
      });
      const timer = setTimeout(() => {
        finish({ statusCode: null, error: `no answer within ${this.timeoutMs} ms`, durationMs: 0, success: false });
        request.destroy();
      }, this.timeoutMs);
      request.on('error', (err) => finish({ statusCode: null, error: err.message.slice(0, MAX_ERROR), durationMs: 0, success: false }));
      request.end(body);
    });
  }
}
