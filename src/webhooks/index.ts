// Webhooks as one plugin: the routes, and the delivery worker running while the app is up.
import type { FastifyInstance } from 'fastify';
import type { Store } from '../store/db.ts';
import type { KeyEncryption } from '../auth/kek.ts';
import webhookRoutes from './routes.ts';
import { DeliveryWorker, type DeliveryLimits, type WorkerOptions } from './worker.ts';

export { enqueueWebhookEvent } from './repository.ts';

export interface WebhooksOptions {
  store: Store;
  encryption: KeyEncryption;
  /** VOUCH_WEBHOOK_ALLOW_PRIVATE */
  allowPrivate: boolean;
  /** VOUCH_WEBHOOKS_PER_CLIENT and VOUCH_WEBHOOK_* (the worker's options, when given, win) */
  limits?: Partial<DeliveryLimits> & { maxPerClient?: number };
  worker?: WorkerOptions & { enabled?: boolean };
}

export async function registerWebhooks(app: FastifyInstance, options: WebhooksOptions): Promise<DeliveryWorker> {
  const { maxPerClient = 20, ...limits } = options.limits ?? {};
  const worker = new DeliveryWorker({ store: options.store, encryption: options.encryption, allowPrivate: options.allowPrivate, log: app.log }, { ...limits, ...options.worker });
  await app.register(webhookRoutes, {
    store: options.store, encryption: options.encryption, allowPrivate: options.allowPrivate, worker, maxPerClient,
    ...(options.worker?.urlPolicy?.resolve ? { resolve: options.worker.urlPolicy.resolve } : {}),
  });
  if (options.worker?.enabled !== false) app.addHook('onReady', async () => worker.start());
  // preClose: in-flight deliveries finish (and are recorded) while the store is still open.
  app.addHook('preClose', async () => worker.stop());
  return worker;
}
