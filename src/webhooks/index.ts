// The webhook delivery worker, running while the app is up; the routes (routes.ts) are listed in src/routes.ts.
import type { FastifyInstance } from 'fastify';
import type { Store } from '../store/db.ts';
import type { KeyEncryption } from '../lib/envelope.ts';
import type { BackgroundServices } from '../lib/background.ts';
import { DeliveryWorker, type DeliveryLimits, type WorkerOptions } from './worker.ts';

export interface WebhooksOptions {
  store: Store;
  encryption: KeyEncryption;
  /** VOUCH_WEBHOOK_ALLOW_PRIVATE */
  allowPrivate: boolean;
  /** VOUCH_WEBHOOKS_PER_CLIENT and VOUCH_WEBHOOK_* (the worker's options, when given, win) */
  limits?: Partial<DeliveryLimits> & { maxPerClient?: number };
  worker?: WorkerOptions & { enabled?: boolean };
}

/** What the webhook routes need besides the worker: the URL check's resolver and the per-client cap. */
export interface WebhookServices {
  worker: DeliveryWorker;
  maxPerClient: number;
  resolve?: (host: string) => Promise<Array<{ address: string; family: number }>>;
}

export function startWebhookWorker(
  app: FastifyInstance,
  background: BackgroundServices,
  options: WebhooksOptions,
): WebhookServices {
  const { maxPerClient = 20, ...limits } = options.limits ?? {};
  const worker = new DeliveryWorker(
    { store: options.store, encryption: options.encryption, allowPrivate: options.allowPrivate, log: app.log },
    { ...limits, ...options.worker },
  );
  // Stopped as the app begins to close: deliveries in flight (a manual retry's too) finish, and are recorded,
  // while the store is still open.
  const enabled = options.worker?.enabled !== false;
  background.add({
    name: 'webhook deliveries',
    start: () => (enabled ? worker.start() : undefined),
    stop: () => worker.stop(),
  });
  return {
    worker,
    maxPerClient,
    ...(options.worker?.urlPolicy?.resolve ? { resolve: options.worker.urlPolicy.resolve } : {}),
  };
}
